using LeaseSimulation.Baselines;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// Runs a <see cref="FifoSingleThreadContext"/> on a thread of its own until disposed, so a benchmark posts into a
/// live loop (the counterpart of <see cref="PriorityAsyncContextThread"/>).
/// </summary>
public sealed class FifoContextThread : IDisposable
{
    private readonly TaskCompletionSource _stop = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Thread _thread;

    /// <summary>Starts the thread and waits until its context is running.</summary>
    public FifoContextThread()
    {
        var ready = new TaskCompletionSource<SynchronizationContext>(TaskCreationOptions.RunContinuationsAsynchronously);
        _thread = new Thread(() => FifoSingleThreadContext.Run(() =>
        {
            ready.SetResult(SynchronizationContext.Current!);
            return _stop.Task;
        }))
        {
            IsBackground = true,
            Name = "FIFO single-thread context",
        };
        _thread.Start();
        Context = ready.Task.GetAwaiter().GetResult();
    }

    /// <summary>Gets the context; <see cref="SynchronizationContext.Post"/> queues onto the thread.</summary>
    public SynchronizationContext Context { get; }

    /// <summary>Lets the queued work finish and waits for the thread to exit.</summary>
    public void Dispose()
    {
        _stop.TrySetResult();
        _thread.Join();
    }
}
