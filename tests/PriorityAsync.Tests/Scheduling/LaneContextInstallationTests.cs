namespace PriorityAsync.Tests.Scheduling;

/// <summary>
/// Pins where each lane's synchronization context is current: inside every item of the lane, and nowhere else. The
/// worker loops leave a lane's context installed between consecutive items, so these tests guard the restore points.
/// </summary>
public class LaneContextInstallationTests
{
    [Fact]
    public void Run_ItemsOfAlternatingLanes_EachSeesItsLanesContext()
    {
        var mismatches = new List<string>();
        PriorityAsyncContext.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            for (var i = 0; i < 20; i++)
            {
                var priority = i % 3 == 0 ? LanePriority.Lease : LanePriority.Processing;
                await PriorityScheduler.YieldTo(priority);
                if (!ReferenceEquals(SynchronizationContext.Current, scheduler.GetLane(priority).SynchronizationContext))
                {
                    mismatches.Add($"await {i} in {priority}");
                }
            }
        });

        mismatches.Should().BeEmpty();
    }

    [Fact]
    public void Run_Returns_RestoresTheCallersContext()
    {
        var outer = new SynchronizationContext();
        var previous = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(outer);
        try
        {
            PriorityAsyncContext.Run(async () =>
            {
                await Task.Yield();
                await PriorityScheduler.YieldTo(LanePriority.Processing);
            });

            SynchronizationContext.Current.Should().BeSameAs(outer);
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }
    }

    [Fact]
    public void Run_ItemLeavesAnotherContextInstalled_NextItemStillSeesTheLanesContext()
    {
        SynchronizationContext? seen = null;
        SynchronizationContext? expected = null;
        PriorityAsyncContext.Run(async () =>
        {
            var lane = PriorityScheduler.Current!.GetLane(LanePriority.Processing);
            expected = lane.SynchronizationContext;
            await lane.Run(() => SynchronizationContext.SetSynchronizationContext(new SynchronizationContext()));
            await lane.Run(() => seen = SynchronizationContext.Current);
        });

        seen.Should().BeSameAs(expected);
    }

    [Fact]
    public void Run_VirtualClockFiresARawTimer_CallbackSeesTheThreadsOwnContext()
    {
        var clock = new VirtualTimeProvider();
        var outer = new SynchronizationContext();
        SynchronizationContext? seenByTimer = null;
        var previous = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(outer);
        try
        {
            PriorityAsyncContext.Run(
                async () =>
                {
                    var fired = new TaskCompletionSource();
                    await PriorityScheduler.YieldTo(LanePriority.Processing);
                    using var timer = clock.CreateTimer(
                        _ =>
                        {
                            seenByTimer = SynchronizationContext.Current;
                            fired.TrySetResult();
                        },
                        null,
                        TimeSpan.FromSeconds(1),
                        Timeout.InfiniteTimeSpan);
                    await fired.Task;
                },
                new PrioritySchedulerOptions { TimeProvider = clock });
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(previous);
        }

        seenByTimer.Should().BeSameAs(outer);
    }

    [Fact]
    public async Task TaskScheduler_ThreadPoolMode_PoolThreadGetsItsContextBack()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, Mode = PriorityWorkerMode.ThreadPool });
        var lane = scheduler.GetLane(LanePriority.Processing);
        var threads = new HashSet<int>();
        for (var i = 0; i < 10; i++)
        {
            await lane.Run(() => threads.Add(Environment.CurrentManagedThreadId));
        }

        // Probe the pool threads that ran lane items: none may still carry the lane's context.
        var leaked = 0;
        var probes = Enumerable.Range(0, 64).Select(_ => Task.Run(() =>
        {
            if (SynchronizationContext.Current is not null)
            {
                Interlocked.Increment(ref leaked);
            }
        }));
        await Task.WhenAll(probes);
        leaked.Should().Be(0);
    }
}
