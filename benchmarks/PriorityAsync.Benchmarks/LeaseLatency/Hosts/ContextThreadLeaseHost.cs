namespace PriorityAsync.Benchmarks.LeaseLatency.Hosts;

/// <summary>A <see cref="PriorityAsyncContext"/> on its own thread: processors in the processing lane, the lease loop in the lease lane.</summary>
internal sealed class ContextThreadLeaseHost : ILeaseHost
{
    private readonly PriorityAsyncContextThread _thread = new();

    public TimeProvider TimeProvider => _thread.Context.TimeProvider;

    public Task StartProcessor(Func<Task> processor) => _thread.Context.GetLane(LanePriority.Processing).Run(processor);

    public Task StartLeaseLoop(Func<Task> leaseLoop) => _thread.Context.GetLane(LanePriority.Lease).Run(leaseLoop);

    public void Dispose() => _thread.Dispose();
}
