using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Yielding;

public class ShouldYieldTests
{
    [Fact]
    public void ShouldYield_FlipsWhenMoreUrgentWorkArrives_AndYieldIfNeededLetsItRun()
    {
        var events = new List<string>();
        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            await scheduler.GetLane(LanePriority.Processing).Run(async () =>
            {
                events.Add($"before: {scheduler.ShouldYield}");
                scheduler.GetLane(LanePriority.Receive).SynchronizationContext.Post(_ => events.Add("receive ran"), null);
                events.Add($"after less urgent work: {scheduler.ShouldYield}");
                scheduler.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => events.Add("lease ran"), null);
                events.Add($"after more urgent work: {scheduler.ShouldYield}");
                await PriorityScheduler.YieldIfNeeded();
                events.Add($"resumed in {PriorityScheduler.CurrentLane!.Name}: {scheduler.ShouldYield}");
                await PriorityScheduler.YieldIfNeeded();
                events.Add("no yield needed");
            });
        });

        events.Should().Equal(
            "before: False",
            "after less urgent work: False",
            "after more urgent work: True",
            "lease ran",
            "resumed in Processing: False",
            "no yield needed",
            "receive ran");
    }

    [Fact]
    public void YieldQuantum_TurnsShouldYieldOnAfterTheSliceRanTooLong()
    {
        var clock = new VirtualTimeProvider();
        var observed = new List<bool>();

        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            observed.Add(scheduler.ShouldYield);
            clock.Advance(TimeSpan.FromMilliseconds(4));
            observed.Add(scheduler.ShouldYield);
            clock.Advance(TimeSpan.FromMilliseconds(2));
            observed.Add(scheduler.ShouldYield);
            await PriorityScheduler.YieldIfNeeded();
            observed.Add(scheduler.ShouldYield);
        }, new PrioritySchedulerOptions { TimeProvider = clock, YieldQuantum = TimeSpan.FromMilliseconds(5) });

        observed.Should().Equal(false, false, true, false);
    }

    [Fact]
    public void ShouldYield_IsFalseOutsideTheScheduler()
    {
        using var context = new PriorityAsyncContext();

        context.ShouldYield.Should().BeFalse();
    }

    [Fact]
    public void LaneHasMoreUrgentWork_SeesOnlyMoreUrgentLanes_FromAnyThread()
    {
        var observed = new List<bool>();
        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            await PriorityScheduler.YieldTo(LanePriority.Processing);
            var lane = PriorityScheduler.CurrentLane!;
            observed.Add(lane.HasMoreUrgentWork);
            scheduler.GetLane(LanePriority.Receive).SynchronizationContext.Post(_ => { }, null);
            observed.Add(lane.HasMoreUrgentWork);
            scheduler.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => { }, null);
            observed.Add(lane.HasMoreUrgentWork);
            observed.Add(Task.Run(() => lane.HasMoreUrgentWork).Result); // the context thread waits: the lease item cannot run
            await Task.Yield();
            observed.Add(lane.HasMoreUrgentWork);
        });

        // The last read comes after the yield, when the lease item has run.
        observed.Should().Equal(false, false, true, true, false);
    }
}
