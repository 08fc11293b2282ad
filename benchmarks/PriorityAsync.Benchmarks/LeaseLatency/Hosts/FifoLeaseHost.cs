using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.LeaseLatency.Hosts;

/// <summary>A plain FIFO single-thread context: processors and the lease loop share one queue; delays use system timers.</summary>
internal sealed class FifoLeaseHost : ILeaseHost
{
    private readonly FifoContextThread _thread = new();

    public TimeProvider TimeProvider => TimeProvider.System;

    public Task StartProcessor(Func<Task> processor) => Start(processor);

    public Task StartLeaseLoop(Func<Task> leaseLoop) => Start(leaseLoop);

    public void Dispose() => _thread.Dispose();

    private Task Start(Func<Task> work)
    {
        var started = new TaskCompletionSource<Task>(TaskCreationOptions.RunContinuationsAsynchronously);
        _thread.Context.Post(_ => started.SetResult(work()), null);
        return started.Task.Unwrap();
    }
}
