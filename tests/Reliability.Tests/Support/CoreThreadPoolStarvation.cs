namespace PriorityAsync.Reliability.Tests.Support;

/// <remarks>A copy of PriorityAsync.Tests/Support/ThreadPoolStarvation.cs: that helper is internal to another test assembly, which this one cannot reference.</remarks>
/// <summary>Caps the thread pool just above its current size and blocks every pool thread until disposed.</summary>
internal sealed class CoreThreadPoolStarvation : IDisposable
{
    private readonly ManualResetEventSlim _release = new();
    private readonly CountdownEvent _blockersDone;
    private readonly int _maxWorkers;
    private readonly int _maxIo;

    private CoreThreadPoolStarvation()
    {
        ThreadPool.GetMaxThreads(out _maxWorkers, out _maxIo);
        ThreadPool.GetMinThreads(out var minWorkers, out var minIo);
        // Room for a few threads beyond those that exist (some may be held by the test runner), and no more.
        var cap = Math.Max(minWorkers, ThreadPool.ThreadCount + 2);
        ThreadPool.SetMaxThreads(cap, Math.Max(minIo, 1)).Should().BeTrue();

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

        oneStarted.Wait(TimeSpan.FromSeconds(30)).Should().BeTrue("a blocker starts on the pool");
        ThreadPool.PendingWorkItemCount.Should().BePositive("blockers are left waiting: every pool thread is taken");
    }

    public static CoreThreadPoolStarvation Begin() => new();

    public void Dispose()
    {
        _release.Set();
        _blockersDone.Wait(TimeSpan.FromSeconds(60));
        ThreadPool.SetMaxThreads(_maxWorkers, _maxIo);
        _release.Dispose();
        _blockersDone.Dispose();
    }
}
