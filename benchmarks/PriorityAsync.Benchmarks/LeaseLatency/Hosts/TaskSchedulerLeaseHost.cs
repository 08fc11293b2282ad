namespace PriorityAsync.Benchmarks.LeaseLatency.Hosts;

/// <summary>
/// A <see cref="PriorityTaskScheduler"/> with dedicated workers (and <paramref name="reservedWorkers"/> reserved for
/// the lease lane): processors in the processing lane, the lease loop in the lease lane.
/// </summary>
internal sealed class TaskSchedulerLeaseHost(int workers, int reservedWorkers, ThreadPriority ordinaryWorkerPriority = ThreadPriority.Normal) : ILeaseHost
{
    private readonly PriorityTaskScheduler _scheduler = new(new PriorityTaskSchedulerOptions
    {
        WorkerCount = workers,
        ReservedWorkerCount = reservedWorkers,
        OrdinaryWorkerPriority = ordinaryWorkerPriority,
    });

    public TimeProvider TimeProvider => _scheduler.TimeProvider;

    public Task StartProcessor(Func<Task> processor) => _scheduler.GetLane(LanePriority.Processing).Run(processor);

    public Task StartLeaseLoop(Func<Task> leaseLoop) => _scheduler.GetLane(LanePriority.Lease).Run(leaseLoop);

    public void Dispose() => _scheduler.Dispose();
}
