using PriorityAsync.Reliability.Tests.Support;

namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>
/// Timers created, changed and disposed from many threads while their scheduler runs and stops, and a virtual clock
/// advanced by one thread while others churn its timers: nothing throws, a one-shot timer fires at most once, a timer
/// disposed long before its due time never fires, and no armed timer is left behind.
/// </summary>
public class TimerChurnTests
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task SchedulerTimers_ChurnedFromManyThreads_WhileTheSchedulerStops()
    {
        var perThread = ReliabilitySettings.Long ? 20_000 : 2_000;
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, ShutdownTimeout = TimeSpan.Zero });
        var oneShotFirings = new int[4 * perThread];
        var disposedEarlyFired = 0;
        var errors = 0;
        var threads = Enumerable.Range(0, 4).Select(t => new Thread(() =>
        {
            var random = new Random(t);
            try
            {
                for (var i = 0; i < perThread; i++)
                {
                    var id = (t * perThread) + i;
                    using var oneShot = scheduler.TimeProvider.CreateTimer(_ => Interlocked.Increment(ref oneShotFirings[id]), null, TimeSpan.FromMilliseconds(random.Next(0, 3)), Timeout.InfiniteTimeSpan);
                    var early = scheduler.TimeProvider.CreateTimer(_ => Interlocked.Increment(ref disposedEarlyFired), null, TimeSpan.FromMinutes(5), Timeout.InfiniteTimeSpan);
                    early.Change(TimeSpan.FromMinutes(10), TimeSpan.FromMinutes(10));
                    early.Dispose();
                    if (i == perThread / 2 && t == 0)
                    {
                        scheduler.Complete(); // the scheduler stops while the others churn
                    }
                }
            }
            catch (Exception)
            {
                Interlocked.Increment(ref errors);
            }
        }) { IsBackground = true }).ToArray();
        foreach (var thread in threads)
        {
            thread.Start();
        }

        foreach (var thread in threads)
        {
            thread.Join(Generous).Should().BeTrue();
        }

        await scheduler.Completion.WaitAsync(Generous);
        await Task.Delay(50);
        errors.Should().Be(0, "creating, changing and disposing timers never throws, before, during or after the stop");
        oneShotFirings.Should().OnlyContain(f => f <= 1, "a one-shot timer fires at most once");
        disposedEarlyFired.Should().Be(0, "a timer disposed minutes before its due time never fires");
        scheduler.Dispose();
    }

    [Fact]
    public void VirtualClockTimers_ChurnedWhileAnotherThreadAdvancesTheClock_LeaveNoArmedTimer()
    {
        var perThread = ReliabilitySettings.Long ? 50_000 : 5_000;
        var clock = new VirtualTimeProvider();
        var firings = new int[3 * perThread];
        var changed = new bool[3 * perThread];
        var stop = 0;
        var advancer = new Thread(() =>
        {
            while (Volatile.Read(ref stop) == 0)
            {
                clock.Advance(TimeSpan.FromMilliseconds(1));
            }
        }) { IsBackground = true };
        advancer.Start();
        var churners = Enumerable.Range(0, 3).Select(t => new Thread(() =>
        {
            var random = new Random(100 + t);
            for (var i = 0; i < perThread; i++)
            {
                var id = (t * perThread) + i;
                var timer = clock.CreateTimer(_ => Interlocked.Increment(ref firings[id]), null, TimeSpan.FromMilliseconds(random.Next(0, 5)), Timeout.InfiniteTimeSpan);
                if (random.Next(2) == 0)
                {
                    changed[id] = true; // re-arms it: it may fire again, as any .NET timer would
                    timer.Change(TimeSpan.FromMilliseconds(random.Next(0, 5)), Timeout.InfiniteTimeSpan);
                }

                timer.Dispose();
            }
        }) { IsBackground = true }).ToArray();
        foreach (var churner in churners)
        {
            churner.Start();
        }

        foreach (var churner in churners)
        {
            churner.Join(Generous).Should().BeTrue();
        }

        Volatile.Write(ref stop, 1);
        advancer.Join(Generous).Should().BeTrue();
        clock.Advance(TimeSpan.FromHours(1));
        clock.ActiveTimerCount.Should().Be(0, "every timer was disposed");
        Enumerable.Range(0, firings.Length).Should().OnlyContain(
            id => firings[id] <= (changed[id] ? 2 : 1),
            "a one-shot timer fires at most once per arming");
    }
}
