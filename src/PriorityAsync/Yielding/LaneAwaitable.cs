using System.Runtime.CompilerServices;

namespace PriorityAsync;

/// <summary>
/// An awaitable that always yields and continues in one lane. Returned by
/// <see cref="PriorityScheduler.YieldTo(LanePriority)"/> and <see cref="Lane.SwitchTo"/>.
/// </summary>
public readonly struct LaneAwaitable
{
    private readonly Lane _lane;

    internal LaneAwaitable(Lane lane) => _lane = lane;

    /// <summary>Gets the awaiter.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(_lane);

    /// <summary>The awaiter of a <see cref="LaneAwaitable"/>.</summary>
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly Lane _lane;

        internal Awaiter(Lane lane) => _lane = lane;

        /// <summary>Gets <see langword="false"/>: the awaitable always yields.</summary>
        public bool IsCompleted => false;

        /// <summary>Ends the await.</summary>
        public void GetResult()
        {
        }

        /// <summary>Queues <paramref name="continuation"/> into the lane, flowing the execution context.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation)
        {
            ArgumentNullException.ThrowIfNull(continuation);
            var context = ExecutionContext.Capture();
            if (context is null)
            {
                UnsafeOnCompleted(continuation);
                return;
            }

            _lane.Scheduler.Enqueue(_lane, (Action)(() => ExecutionContext.Run(context, static c => ((Action)c!)(), continuation)), null);
        }

        /// <summary>Queues <paramref name="continuation"/> into the lane; the async method builder flows the execution context.</summary>
        /// <param name="continuation">The continuation.</param>
        public void UnsafeOnCompleted(Action continuation)
        {
            ArgumentNullException.ThrowIfNull(continuation);
            _lane.Scheduler.Enqueue(_lane, continuation, null);
        }
    }
}
