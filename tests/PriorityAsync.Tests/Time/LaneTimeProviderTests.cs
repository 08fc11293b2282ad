using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Time;

public class LaneTimeProviderTests
{
    [Fact]
    public void TimerCallback_RunsInTheLaneThatCreatedTheTimer()
    {
        var clock = new VirtualTimeProvider();
        var lanes = new List<string?>();

        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            await PriorityScheduler.YieldTo(LanePriority.Receive);
            using var timer = scheduler.TimeProvider.CreateTimer(_ => lanes.Add(PriorityScheduler.CurrentLane?.Name), null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);
            await Task.Delay(TimeSpan.FromSeconds(2), scheduler.TimeProvider);
        }, new PrioritySchedulerOptions { TimeProvider = clock });

        lanes.Should().Equal("Receive");
    }

    [Fact]
    public void TimerFiringAfterTheRun_IsCountedAsRejected_AndRunsOnThePool_NeverThrown()
    {
        var clock = new VirtualTimeProvider();
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { TimeProvider = clock });
        using var fired = new ManualResetEventSlim();
        var firedOnPool = false;
        ITimer? timer = null;
        context.Execute(() =>
        {
            timer = context.TimeProvider.CreateTimer(
                _ =>
                {
                    firedOnPool = Thread.CurrentThread.IsThreadPoolThread && SynchronizationContext.Current is null;
                    fired.Set();
                },
                null,
                TimeSpan.FromSeconds(5),
                Timeout.InfiniteTimeSpan);
            return Task.CompletedTask;
        });

        clock.Advance(TimeSpan.FromSeconds(5));

        context.RejectedWorkCount.Should().Be(1);
        fired.Wait(Bounded.Generous).Should().BeTrue("a rejected timer firing still runs, on the thread pool");
        firedOnPool.Should().BeTrue();
        timer!.Dispose();
    }

    [Fact]
    public void Time_ComesFromTheSchedulersClock()
    {
        var clock = new VirtualTimeProvider(new DateTimeOffset(2030, 1, 1, 0, 0, 0, TimeSpan.Zero));
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { TimeProvider = clock });
        clock.Advance(TimeSpan.FromMinutes(3));

        context.TimeProvider.GetUtcNow().Should().Be(clock.GetUtcNow());
        context.TimeProvider.GetTimestamp().Should().Be(clock.GetTimestamp());
        context.TimeProvider.TimestampFrequency.Should().Be(clock.TimestampFrequency);
    }

    [Fact]
    public async Task DedicatedTimerThread_SurvivesFarOffTimers_AndStillFiresNearOnes()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        using var farOff = scheduler.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.FromDays(400), Timeout.InfiniteTimeSpan);
        using var almostForever = scheduler.TimeProvider.CreateTimer(_ => { }, null, TimeSpan.MaxValue, Timeout.InfiniteTimeSpan);

        var lane = await scheduler.GetLane(LanePriority.Processing).Run(async () =>
        {
            await Task.Delay(TimeSpan.FromMilliseconds(10), scheduler.TimeProvider);
            return PriorityScheduler.CurrentLane!.Name;
        }).WaitAsync(Bounded.Generous);

        lane.Should().Be("Processing");
    }
}
