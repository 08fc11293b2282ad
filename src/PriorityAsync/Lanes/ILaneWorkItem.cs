namespace PriorityAsync;

/// <summary>
/// Work that <see cref="Lane.StartTracked"/> queues into a lane without a delegate, a closure or a task: the lane calls
/// <see cref="Execute"/> once, on one of the scheduler's threads, with the lane's synchronization context current.
/// </summary>
/// <remarks>
/// The object itself is the queued item, so an owner that is allocated anyway (the pump's per-message context) queues
/// its work for nothing. <see cref="Execute"/> must not throw: like any posted callback, an exception it throws is
/// reported through <see cref="PriorityScheduler.UnhandledException"/> on a <see cref="PriorityTaskScheduler"/> and ends
/// the run of a <see cref="PriorityAsyncContext"/>. Start asynchronous work there and let it report its own failures.
/// </remarks>
internal interface ILaneWorkItem
{
    /// <summary>Runs the work in the lane it was queued into.</summary>
    void Execute();
}
