namespace PriorityAsync;

public sealed partial class Lane
{
    /// <summary>The one callback every work item is queued with: the item is the state, so a post allocates nothing.</summary>
    private static readonly SendOrPostCallback ExecuteWorkItem = static state => ((ILaneWorkItem)state!).Execute();

    /// <summary>
    /// Queues <paramref name="workItem"/> into this lane as tracked work, like <see cref="Run(Func{Task})"/> without its
    /// delegate, task, unwrap and tracking continuation: the same acceptance check (it throws where <c>Run</c> throws),
    /// and the work counts as outstanding, so a graceful stop of the scheduler waits for it, until the owner calls
    /// <see cref="EndTracked"/> exactly once when the work (including anything it awaits) has ended.
    /// </summary>
    /// <param name="workItem">The work; <see cref="ILaneWorkItem.Execute"/> runs once in this lane.</param>
    /// <exception cref="ObjectDisposedException">The scheduler has been disposed.</exception>
    /// <exception cref="InvalidOperationException">
    /// The scheduler has finished, or is shutting down and the caller is not one of its threads.
    /// </exception>
    /// <remarks>
    /// The item travels like a <see cref="System.Threading.SynchronizationContext.Post"/> of this lane: once the
    /// scheduler stops taking work, an item that still reaches the lane runs on the thread pool and counts in
    /// <see cref="PriorityScheduler.RejectedWorkCount"/> as a post. No execution context flows with it: an owner that
    /// needs one captures and restores it itself.
    /// </remarks>
    internal void StartTracked(ILaneWorkItem workItem)
    {
        ArgumentNullException.ThrowIfNull(workItem);
        Scheduler.StartTrackedRun();
        Scheduler.Enqueue(this, ExecuteWorkItem, workItem);
    }

    /// <summary>
    /// Queues <paramref name="workItem"/> into this lane as the next step of work already tracked (or not tracked at
    /// all), like a <see cref="System.Threading.SynchronizationContext.Post"/>: it never throws, and once the scheduler
    /// stops taking work the item runs on the thread pool and counts in <see cref="PriorityScheduler.RejectedWorkCount"/>.
    /// </summary>
    /// <param name="workItem">The work; <see cref="ILaneWorkItem.Execute"/> runs once in this lane.</param>
    internal void Post(ILaneWorkItem workItem)
    {
        ArgumentNullException.ThrowIfNull(workItem);
        Scheduler.Enqueue(this, ExecuteWorkItem, workItem);
    }

    /// <summary>Ends one piece of tracked work started by <see cref="StartTracked"/>; call it exactly once per start.</summary>
    internal void EndTracked() => Scheduler.RunCompleted();
}
