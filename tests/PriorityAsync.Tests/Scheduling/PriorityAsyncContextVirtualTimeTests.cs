using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Scheduling;

public class PriorityAsyncContextVirtualTimeTests
{
    [Fact]
    public void LongScenario_IsExactAndRepeatable()
    {
        var first = RunScenario();
        var second = RunScenario();

        first.Elapsed.Should().Be(second.Elapsed);
        first.Log.Should().Equal(second.Log);

        // 10 workers × 100 rounds × 2 s of CPU on one thread: 2 000 s of CPU keep the thread busy from the first
        // slice to the last; the last worker's final 1 s wait comes after that.
        first.Elapsed.Should().Be(TimeSpan.FromSeconds(2001));
        // Virtual time never waits in real time: a run that slept through its timers would take at least the 33 minutes
        // it simulates. Compared with what the run itself measured, not with a budget, so it holds at any load.
        first.WallClock.Should().BeLessThan(first.Elapsed, "33 minutes of virtual time are not waited for in real time");
    }

    [Fact]
    public void TimerDueDuringACpuSlice_RunsRightAfterTheSlice_InItsOwnLane()
    {
        var clock = new VirtualTimeProvider();
        var events = new List<string>();

        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            var lease = scheduler.GetLane(LanePriority.Lease).Run(async () =>
            {
                await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
                events.Add($"lease at {clock.Elapsed.TotalSeconds}s in {PriorityScheduler.CurrentLane!.Name}");
            });
            var processing = scheduler.GetLane(LanePriority.Processing).Run(async () =>
            {
                clock.Advance(TimeSpan.FromSeconds(3));
                events.Add("slice 1 done");
                await PriorityScheduler.YieldTo(LanePriority.Processing);
                events.Add("slice 2");
            });
            await Task.WhenAll(lease, processing);
        }, new PrioritySchedulerOptions { TimeProvider = clock });

        events.Should().Equal("slice 1 done", "lease at 3s in Lease", "slice 2");
    }

    private static (TimeSpan Elapsed, List<string> Log, TimeSpan WallClock) RunScenario()
    {
        var clock = new VirtualTimeProvider();
        var log = new List<string>();
        var started = System.Diagnostics.Stopwatch.StartNew();

        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            var workers = Enumerable.Range(0, 10).Select(w => scheduler.GetLane(LanePriority.Processing).Run(async () =>
            {
                for (var round = 0; round < 100; round++)
                {
                    clock.Advance(TimeSpan.FromSeconds(2));
                    await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
                }

                log.Add($"worker {w} done at {clock.Elapsed.TotalSeconds}");
            }));
            await Task.WhenAll(workers);
        }, new PrioritySchedulerOptions { TimeProvider = clock });

        return (clock.Elapsed, log, started.Elapsed);
    }
}
