namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>Gets the scheduler running the calling thread's current item, or <see langword="null"/> outside any.</summary>
    public static PriorityScheduler? Current => t_worker?.Scheduler;

    /// <summary>Gets the lane of the calling thread's current item, or <see langword="null"/> outside any scheduler.</summary>
    public static Lane? CurrentLane => t_worker?.CurrentLane;

    /// <summary>
    /// Returns an awaitable that always yields and resumes the rest of the method in the lane
    /// <paramref name="priority"/> of the current scheduler. Queuing costs O(1) whatever the backlog.
    /// </summary>
    /// <param name="priority">The lane to continue in.</param>
    /// <returns>The awaitable.</returns>
    /// <exception cref="InvalidOperationException">The calling code is not running in a PriorityAsync scheduler.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The current scheduler has no lane of that rank.</exception>
    public static LaneAwaitable YieldTo(LanePriority priority)
    {
        var scheduler = Current ?? throw NotInScheduler(nameof(YieldTo));
        return new LaneAwaitable(scheduler.GetLane(priority));
    }

    /// <summary>
    /// Returns an awaitable that yields only when <see cref="ShouldYield"/> is true, and then resumes in the same lane
    /// behind the items already waiting there. When no yield is needed, awaiting it completes synchronously.
    /// </summary>
    /// <returns>The awaitable.</returns>
    /// <exception cref="InvalidOperationException">The calling code is not running in a PriorityAsync scheduler.</exception>
    public static YieldIfNeededAwaitable YieldIfNeeded()
    {
        var worker = t_worker;
        if (worker?.CurrentLane is not { } lane)
        {
            throw NotInScheduler(nameof(YieldIfNeeded));
        }

        return new YieldIfNeededAwaitable(lane);
    }

    private static InvalidOperationException NotInScheduler(string member) => new(
        $"PriorityScheduler.{member} must be called from code running in a PriorityAsync scheduler. Start one with " +
        "PriorityAsyncContext.Run(...) (one thread) or run the code in a lane of a PriorityTaskScheduler " +
        "(scheduler.GetLane(...).Run(...)); after ConfigureAwait(false), come back with await lane.SwitchTo().");
}
