namespace PriorityAsync.TestKit;

/// <summary>
/// Caps the thread pool just above its current size and blocks every pool thread until disposed: the pool cannot run
/// anything else meanwhile. One implementation for the tests and the lease-latency harness; the simulation's sustained
/// sync-over-async load (samples, LeaseSimulation.Hosting.SyncOverAsyncStarvation) is a different scenario: a feeder
/// that keeps a backlog of blocking calls coming.
/// </summary>
public sealed class StarvedThreadPool : IDisposable
{
    private readonly ManualResetEventSlim _release = new();
    private readonly CountdownEvent _blockersDone;
    private readonly int _maxWorkers;
    private readonly int _maxIo;
    private bool _disposed;

    private StarvedThreadPool()
    {
        ThreadPool.GetMaxThreads(out _maxWorkers, out _maxIo);
        ThreadPool.GetMinThreads(out var minWorkers, out var minIo);

        // Room for a few threads beyond those that exist (some may be held by the test runner), and no more.
        var cap = Math.Max(minWorkers, ThreadPool.ThreadCount + 2);
        if (!ThreadPool.SetMaxThreads(cap, Math.Max(minIo, 1)))
        {
            throw new InvalidOperationException($"Could not cap the thread pool at {cap} worker threads.");
        }

        // More blockers than threads can exist: every pool thread ends up blocked and the rest wait in the queue.
        var blockers = cap + 16;
        _blockersDone = new CountdownEvent(blockers);
        using var oneStarted = new ManualResetEventSlim();
        for (var i = 0; i < blockers; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(_ =>
            {
                oneStarted.Set();
                _release.Wait();
                _blockersDone.Signal();
            }, null);
        }

        if (!oneStarted.Wait(TimeSpan.FromSeconds(30)) || ThreadPool.PendingWorkItemCount == 0)
        {
            throw new InvalidOperationException("The thread pool could not be starved: no blocker started within 30 s, or none is left waiting.");
        }
    }

    /// <summary>Starves the pool until the returned object is disposed.</summary>
    /// <returns>The starvation; dispose it to end it.</returns>
    public static StarvedThreadPool Begin() => new();

    /// <summary>Releases the blockers and restores the pool's limit; safe to call more than once.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        _release.Set();
        _blockersDone.Wait(TimeSpan.FromSeconds(60));
        ThreadPool.SetMaxThreads(_maxWorkers, _maxIo);
        _release.Dispose();
        _blockersDone.Dispose();
    }
}
