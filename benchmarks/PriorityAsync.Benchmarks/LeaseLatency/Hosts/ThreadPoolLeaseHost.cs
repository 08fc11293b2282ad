namespace PriorityAsync.Benchmarks.LeaseLatency.Hosts;

/// <summary>The .NET thread pool: processors and the lease loop are ordinary <c>Task.Run</c> work; delays use system timers.</summary>
internal sealed class ThreadPoolLeaseHost : ILeaseHost
{
    public TimeProvider TimeProvider => TimeProvider.System;

    public Task StartProcessor(Func<Task> processor) => Task.Run(processor);

    public Task StartLeaseLoop(Func<Task> leaseLoop) => Task.Run(leaseLoop);

    public void Dispose()
    {
    }
}
