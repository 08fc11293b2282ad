using System.Runtime.CompilerServices;
using PriorityAsync;

namespace LeaseSimulation.Consumers;

/// <summary>
/// What an <see cref="IContinuationOrdering"/> hook returns: nothing to wait for, a task, or a switch into a lane.
/// </summary>
/// <remarks>
/// A lane switch must be awaited by the consumer method itself: had the hook been an <c>async</c> method that awaits
/// <c>YieldTo</c>, the consumer's own await would resume in the synchronization context it captured (its old lane).
/// This awaitable hands the consumer's continuation straight to the lane's awaiter.
/// </remarks>
public readonly struct OrderingAwaitable
{
    private readonly Task? _task;
    private readonly Lane? _lane;

    private OrderingAwaitable(Task? task, Lane? lane)
    {
        _task = task;
        _lane = lane;
    }

    /// <summary>Gets an awaitable that completes at once.</summary>
    public static OrderingAwaitable Completed => default;

    /// <summary>Creates an awaitable that waits for <paramref name="task"/> and resumes in the captured context.</summary>
    /// <param name="task">The task.</param>
    /// <returns>The awaitable.</returns>
    public static OrderingAwaitable WaitFor(Task task)
    {
        ArgumentNullException.ThrowIfNull(task);
        return new(task, null);
    }

    /// <summary>Creates an awaitable that always yields and resumes in <paramref name="lane"/>.</summary>
    /// <param name="lane">The lane.</param>
    /// <returns>The awaitable.</returns>
    public static OrderingAwaitable SwitchTo(Lane lane)
    {
        ArgumentNullException.ThrowIfNull(lane);
        return new(null, lane);
    }

    /// <summary>Gets the awaiter.</summary>
    /// <returns>The awaiter.</returns>
    public Awaiter GetAwaiter() => new(_task, _lane);

    /// <summary>The awaiter of an <see cref="OrderingAwaitable"/>.</summary>
    public readonly struct Awaiter : ICriticalNotifyCompletion
    {
        private readonly Task? _task;
        private readonly Lane? _lane;

        internal Awaiter(Task? task, Lane? lane)
        {
            _task = task;
            _lane = lane;
        }

        /// <summary>Gets whether the await can go on synchronously.</summary>
        public bool IsCompleted => _lane is null && (_task is null || _task.IsCompleted);

        /// <summary>Ends the await; rethrows the task's exception.</summary>
        public void GetResult() => _task?.GetAwaiter().GetResult();

        /// <summary>Schedules <paramref name="continuation"/>.</summary>
        /// <param name="continuation">The continuation.</param>
        public void OnCompleted(Action continuation)
        {
            if (_lane is not null)
            {
                _lane.SwitchTo().GetAwaiter().OnCompleted(continuation);
            }
            else
            {
                (_task ?? Task.CompletedTask).GetAwaiter().OnCompleted(continuation);
            }
        }

        /// <summary>Schedules <paramref name="continuation"/> without flowing the execution context.</summary>
        /// <param name="continuation">The continuation.</param>
        public void UnsafeOnCompleted(Action continuation)
        {
            if (_lane is not null)
            {
                _lane.SwitchTo().GetAwaiter().UnsafeOnCompleted(continuation);
            }
            else
            {
                (_task ?? Task.CompletedTask).GetAwaiter().UnsafeOnCompleted(continuation);
            }
        }
    }
}
