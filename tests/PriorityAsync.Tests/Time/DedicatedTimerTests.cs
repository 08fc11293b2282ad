using System.Collections.Concurrent;
using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Time;

/// <summary>
/// The real-time clock of a scheduler (its own timer thread): firings in due order, re-arming and disarming, and
/// timers that outlive the scheduler. Only orderings and occurrences are asserted, never how punctual a firing was.
/// </summary>
public class DedicatedTimerTests
{
    [Fact]
    public async Task Timers_FireInDueOrder_NotInCreationOrder()
    {
        await using var scheduler = OneWorker();
        var fired = new ConcurrentQueue<string>();
        var last = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);

        using var c = scheduler.TimeProvider.CreateTimer(_ => { fired.Enqueue("c"); last.TrySetResult(); }, null, TimeSpan.FromMilliseconds(300), Timeout.InfiniteTimeSpan);
        using var a = scheduler.TimeProvider.CreateTimer(_ => fired.Enqueue("a"), null, TimeSpan.FromMilliseconds(100), Timeout.InfiniteTimeSpan);
        using var b = scheduler.TimeProvider.CreateTimer(_ => fired.Enqueue("b"), null, TimeSpan.FromMilliseconds(200), Timeout.InfiniteTimeSpan);
        await Bounded.Within(last.Task, "the last of three timers");

        fired.Should().Equal("a", "b", "c");
    }

    [Fact]
    public async Task Change_MovesADueTime_OrDisarmsTheTimer()
    {
        await using var scheduler = OneWorker();
        var fired = new ConcurrentQueue<string>();
        var marker = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var moved = scheduler.TimeProvider.CreateTimer(_ => fired.Enqueue("moved"), null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);
        using var disarmed = scheduler.TimeProvider.CreateTimer(_ => fired.Enqueue("disarmed"), null, TimeSpan.FromMilliseconds(50), Timeout.InfiniteTimeSpan);

        moved.Change(TimeSpan.FromMilliseconds(50), Timeout.InfiniteTimeSpan).Should().BeTrue();
        disarmed.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan).Should().BeTrue();
        using var last = scheduler.TimeProvider.CreateTimer(_ => { fired.Enqueue("marker"); marker.TrySetResult(); }, null, TimeSpan.FromMilliseconds(300), Timeout.InfiniteTimeSpan);
        await Bounded.Within(marker.Task, "the marker timer");

        fired.Should().Equal("moved", "marker");
    }

    [Fact]
    public async Task PeriodicTimer_KeepsFiring_UntilDisposed_ThenRefusesChanges()
    {
        await using var scheduler = OneWorker();
        var count = 0;
        var thrice = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var timer = scheduler.TimeProvider.CreateTimer(
            _ =>
            {
                if (Interlocked.Increment(ref count) == 3)
                {
                    thrice.TrySetResult();
                }
            },
            null,
            TimeSpan.Zero,
            TimeSpan.FromMilliseconds(10));

        await Bounded.Within(thrice.Task, "three firings of a periodic timer");
        timer.Dispose();

        timer.Change(TimeSpan.Zero, Timeout.InfiniteTimeSpan).Should().BeFalse("a disposed timer cannot be re-armed");
    }

    [Fact]
    public async Task InvalidTimes_AreRejected_NamingTheArgument()
    {
        await using var scheduler = OneWorker();
        using var timer = scheduler.TimeProvider.CreateTimer(_ => { }, null, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);

        timer.Invoking(t => t.Change(TimeSpan.FromMilliseconds(-2), Timeout.InfiniteTimeSpan)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("dueTime");
        timer.Invoking(t => t.Change(TimeSpan.Zero, TimeSpan.FromMilliseconds(-2))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("period");
        scheduler.TimeProvider.Invoking(p => p.CreateTimer(null!, null, TimeSpan.Zero, TimeSpan.Zero)).Should().Throw<ArgumentNullException>().WithParameterName("callback");
    }

    [Fact]
    public async Task AfterTheStop_TimersCreatedOrChangedStillFire_AndDisarmingStillHolds()
    {
        var scheduler = OneWorker();
        var fired = new ConcurrentQueue<string>();
        using var changed = scheduler.TimeProvider.CreateTimer(_ => fired.Enqueue("changed"), null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);
        using var disarmed = scheduler.TimeProvider.CreateTimer(_ => fired.Enqueue("disarmed"), null, TimeSpan.FromHours(1), Timeout.InfiniteTimeSpan);
        await scheduler.DisposeAsync();

        var created = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var late = scheduler.TimeProvider.CreateTimer(_ => created.TrySetResult(), null, TimeSpan.FromMilliseconds(20), Timeout.InfiniteTimeSpan);
        changed.Change(TimeSpan.FromMilliseconds(20), Timeout.InfiniteTimeSpan).Should().BeTrue();
        disarmed.Change(TimeSpan.FromMilliseconds(500), Timeout.InfiniteTimeSpan).Should().BeTrue();
        disarmed.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan).Should().BeTrue();
        await Bounded.Within(created.Task, "a timer created after the stop");
        var deadline = DateTime.UtcNow + Bounded.Generous;
        while (!fired.Contains("changed"))
        {
            DateTime.UtcNow.Should().BeBefore(deadline, "a timer changed after the stop fires at its new due time");
            await Task.Delay(5);
        }

        // Everything that fired ran on the pool and was counted; the disarmed timer (due 500 ms after its arming, had it
        // stayed armed) is checked behind a marker due later than that.
        var marker = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var after = scheduler.TimeProvider.CreateTimer(_ => marker.TrySetResult(), null, TimeSpan.FromMilliseconds(800), Timeout.InfiniteTimeSpan);
        await Bounded.Within(marker.Task, "the marker timer after the stop");
        fired.Should().Equal("changed");
        scheduler.RejectedWorkCount.Should().Be(3);
    }

    private static PriorityTaskScheduler OneWorker() =>
        new(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0 });
}
