using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Scheduling;

[CollectionDefinition(nameof(ThreadPoolStarvationTests), DisableParallelization = true)]
public class ThreadPoolStarvationCollection
{
}

/// <summary>Starves the process's thread pool, so it runs alone (no other test runs in parallel).</summary>
[Collection(nameof(ThreadPoolStarvationTests))]
public class ThreadPoolStarvationTests
{
    [Fact]
    public void LeaseLaneTimer_FiresAndRuns_WhileTheThreadPoolIsStarved()
    {
        using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
        using var leaseRan = new ManualResetEventSlim();
        using var plainDelayRan = new ManualResetEventSlim();

        using (StarvedThreadPool.Begin())
        {
            scheduler.GetLane(LanePriority.Lease).Run(async () =>
            {
                await Task.Delay(TimeSpan.FromMilliseconds(50), PriorityScheduler.Current!.TimeProvider);
                leaseRan.Set();
            });
            _ = Task.Delay(50).ContinueWith(_ => plainDelayRan.Set(), TaskScheduler.Default);

            leaseRan.Wait(Bounded.Generous).Should().BeTrue("the lease lane has its own timer thread and workers");
            ThreadPool.PendingWorkItemCount.Should().BePositive("the lease ran while the pool was still starved: blockers still wait in its queue");

            // Whether the plain delay has run by now is up to the pool's thread injection (it adds a thread now and then
            // up to its cap), so it is not asserted here; it is certain only once the pool is released.
        }

        plainDelayRan.Wait(TimeSpan.FromSeconds(60)).Should().BeTrue("the plain delay runs once the pool recovers");
    }

    [Fact]
    public async Task ContextThread_DisposesOnAStarvedPool()
    {
        var owner = new PriorityAsyncContextThread();
        await owner.RunAsync(LanePriority.Processing, () => Task.CompletedTask).WaitAsync(Bounded.Generous);
        using var disposed = new ManualResetEventSlim();

        using (StarvedThreadPool.Begin())
        {
            var disposer = new Thread(() =>
            {
                owner.Dispose();
                disposed.Set();
            })
            {
                IsBackground = true,
            };
            disposer.Start();

            disposed.Wait(Bounded.Generous).Should().BeTrue("stopping the context thread needs no thread-pool thread");
        }
    }
}
