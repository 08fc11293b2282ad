namespace PriorityAsync.Benchmarks.LeaseLatency;

/// <summary>
/// Starves the .NET thread pool for as long as it is alive: the pool is capped at <c>cores + 1</c> worker threads and
/// <c>cores</c> of them are held by synchronous waits (the sync-over-async pattern), so one pool thread is left for
/// everything else, timers included. Disposal releases the waits and restores the cap.
/// </summary>
internal sealed class ThreadPoolStarvation : IDisposable
{
    private readonly ManualResetEventSlim _release = new();
    private readonly int _previousMaxWorkers;
    private readonly int _previousMaxIo;

    public ThreadPoolStarvation()
    {
        ThreadPool.GetMaxThreads(out _previousMaxWorkers, out _previousMaxIo);
        var blockers = Environment.ProcessorCount;
        if (!ThreadPool.SetMaxThreads(blockers + 1, _previousMaxIo))
        {
            throw new InvalidOperationException("Could not cap the thread pool for the starvation scenario.");
        }

        using var started = new CountdownEvent(blockers);
        for (var i = 0; i < blockers; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(
                _ =>
                {
                    started.Signal();
                    _release.Wait();
                },
                null);
        }

        started.Wait();
    }

    public void Dispose()
    {
        _release.Set();
        ThreadPool.SetMaxThreads(_previousMaxWorkers, _previousMaxIo);
    }
}
