using System.Runtime.CompilerServices;

namespace PriorityAsync;

/// <summary>
/// An awaitable that yields only when <see cref="PriorityScheduler.ShouldYield"/> is true and then continues in the
/// same lane. Returned by <see cref="PriorityScheduler.YieldIfNeeded"/>.
/// </summary>
public readonly struct YieldIfNeededAwaitable
{
    private readonly Lane _lane;

    internal YieldIfNeededAwaitable(Lane lane) => _lane = lane;

    /// <summary>Gets the awaiter.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(_lane);

    /// <summary>The awaiter of a <see cref="YieldIfNeededAwaitable"/>.</summary>
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly Lane _lane;

        internal Awaiter(Lane lane) => _lane = lane;

        /// <summary>Gets whether the await can complete synchronously (no yield is needed).</summary>
        public bool IsCompleted => !_lane.Scheduler.ShouldYield;

        /// <summary>Ends the await.</summary>
        public void GetResult()
        {
        }

        /// <summary>Queues <paramref name="continuation"/> at the back of the lane, flowing the execution context.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation) => new LaneAwaitable.Awaiter(_lane).OnCompleted(continuation);

        /// <summary>Queues <paramref name="continuation"/> at the back of the lane.</summary>
        /// <param name="continuation">The continuation.</param>
        public void UnsafeOnCompleted(Action continuation) => new LaneAwaitable.Awaiter(_lane).UnsafeOnCompleted(continuation);
    }
}
