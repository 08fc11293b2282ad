using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Scheduling;

public class PriorityAsyncContextDispatchTests
{
    [Fact]
    public void Dispatch_RunsMostUrgentLaneFirst_AndFifoWithinALane()
    {
        var order = new List<string>();
        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            Post(scheduler, LanePriority.Receive, "receive-1");
            Post(scheduler, LanePriority.Processing, "processing-1");
            Post(scheduler, LanePriority.Receive, "receive-2");
            Post(scheduler, LanePriority.Lease, "lease-1");
            Post(scheduler, LanePriority.Processing, "processing-2");
            Post(scheduler, LanePriority.Lease, "lease-2");
            await PriorityScheduler.YieldTo(LanePriority.Receive);
            order.Add("entry-resumed-in-receive");
        });

        order.Should().Equal("lease-1", "lease-2", "processing-1", "processing-2", "receive-1", "receive-2", "entry-resumed-in-receive");

        void Post(PriorityScheduler scheduler, LanePriority lane, string name) =>
            scheduler.GetLane(lane).SynchronizationContext.Post(_ => order.Add(name), null);
    }

    [Fact]
    public void Dispatch_MoreUrgentWorkPostedLater_OvertakesWaitingWork()
    {
        var order = new List<string>();
        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            var processing = scheduler.GetLane(LanePriority.Processing);
            processing.SynchronizationContext.Post(_ =>
            {
                order.Add("processing-1");
                scheduler.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => order.Add("lease"), null);
            }, null);
            processing.SynchronizationContext.Post(_ => order.Add("processing-2"), null);
            await PriorityScheduler.YieldTo(LanePriority.Receive);
        });

        order.Should().Equal("processing-1", "lease", "processing-2");
    }

    [Fact]
    public void StarvationBound_LetsAnOverdueItemOvertakeMoreUrgentLanes()
    {
        var clock = new VirtualTimeProvider();
        var options = new PrioritySchedulerOptions
        {
            TimeProvider = clock,
            Lanes = [new LaneOptions("Urgent"), new LaneOptions("Background", starvationBound: TimeSpan.FromSeconds(1))],
        };
        var backgroundRanAt = TimeSpan.MinValue;
        var urgentSlices = 0;

        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            var background = scheduler.GetLane("Background").Run(() => backgroundRanAt = clock.Elapsed);
            var urgent = scheduler.GetLane("Urgent").Run(async () =>
            {
                for (var i = 0; i < 10; i++)
                {
                    urgentSlices++;
                    clock.Advance(TimeSpan.FromMilliseconds(400));
                    await PriorityScheduler.YieldTo(LanePriority.FromRank(0));
                }
            });
            await Task.WhenAll(background, urgent);
        }, options);

        urgentSlices.Should().Be(10);
        backgroundRanAt.Should().Be(TimeSpan.FromMilliseconds(1200), "the background item is overdue after the third 400 ms slice");
    }

    [Fact]
    public void WithoutStarvationBound_TheLowestLaneWaitsUntilNothingElseIsReady()
    {
        var clock = new VirtualTimeProvider();
        var backgroundRanAt = TimeSpan.MinValue;

        Bounded.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            var receive = scheduler.GetLane(LanePriority.Receive).Run(() => backgroundRanAt = clock.Elapsed);
            var processing = scheduler.GetLane(LanePriority.Processing).Run(async () =>
            {
                for (var i = 0; i < 10; i++)
                {
                    clock.Advance(TimeSpan.FromMilliseconds(400));
                    await PriorityScheduler.YieldTo(LanePriority.Processing);
                }
            });
            await Task.WhenAll(receive, processing);
        }, new PrioritySchedulerOptions { TimeProvider = clock });

        backgroundRanAt.Should().Be(TimeSpan.FromSeconds(4));
    }

    [Fact]
    public void EverythingRunsOnTheCallingThread()
    {
        var callingThread = Environment.CurrentManagedThreadId;
        var threads = new HashSet<int>();

        PriorityAsyncContext.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            threads.Add(Environment.CurrentManagedThreadId);
            var tasks = Enumerable.Range(0, 3).Select(i => scheduler.GetLane(LanePriority.FromRank(i)).Run(async () =>
            {
                threads.Add(Environment.CurrentManagedThreadId);
                await Task.Delay(5, CancellationToken.None);
                threads.Add(Environment.CurrentManagedThreadId);
#pragma warning disable PA0004 // the test needs an await that completes on the thread pool
                await Task.Run(() => Thread.Sleep(5));
#pragma warning restore PA0004
                threads.Add(Environment.CurrentManagedThreadId);
                await Task.Delay(TimeSpan.FromMilliseconds(5), scheduler.TimeProvider);
                threads.Add(Environment.CurrentManagedThreadId);
            }));
            await Task.WhenAll(tasks);
        });

        threads.Should().Equal(callingThread);
    }

    [Fact]
    public void StarvationBound_AnItemOvertakesOnlyOnceItHasWaitedLongerThanTheBound()
    {
        var (ranAt, _) = RunUrgentSlicesAgainst([new LaneOptions("Background", starvationBound: TimeSpan.FromMilliseconds(800))]);

        ranAt.Should().Equal(new[] { ("Background", TimeSpan.FromMilliseconds(1200)) }, "after 800 ms it has waited exactly the bound, not longer");
    }

    [Fact]
    public void StarvationBound_SeveralOverdueLanes_TheMoreUrgentOneGoesFirst_AndAFreshOneWaits()
    {
        var (ranAt, urgentSlices) = RunUrgentSlicesAgainst(
        [
            new LaneOptions("Middle", starvationBound: TimeSpan.FromSeconds(1)),
            new LaneOptions("Low", starvationBound: TimeSpan.FromSeconds(1)),
            new LaneOptions("Patient", starvationBound: TimeSpan.FromSeconds(10)),
        ]);

        ranAt.Should().Equal(
            ("Middle", TimeSpan.FromMilliseconds(1200)),
            ("Low", TimeSpan.FromMilliseconds(1200)),
            ("Patient", TimeSpan.FromMilliseconds(4000)));
        urgentSlices.Should().Be(10);
    }

    [Fact]
    public void StarvationBound_OnEveryLane_StillLetsAnOverdueItemOvertake()
    {
        var (ranAt, _) = RunUrgentSlicesAgainst([new LaneOptions("Background", starvationBound: TimeSpan.FromMilliseconds(800))], urgentBound: TimeSpan.FromSeconds(30));

        ranAt.Should().Equal(new[] { ("Background", TimeSpan.FromMilliseconds(1200)) }, "the urgent lane's own bound changes nothing for the less urgent one");
    }

    /// <summary>
    /// One item in each of <paramref name="lowerLanes"/> (queued least urgent first), against an urgent lane that runs
    /// ten 400 ms slices on virtual time and yields back into itself between them; returns when each item ran.
    /// </summary>
    private static (List<(string Lane, TimeSpan At)> RanAt, int UrgentSlices) RunUrgentSlicesAgainst(LaneOptions[] lowerLanes, TimeSpan? urgentBound = null)
    {
        var clock = new VirtualTimeProvider();
        var ranAt = new List<(string, TimeSpan)>();
        var urgentSlices = 0;
        Bounded.Run(
            async () =>
            {
                var scheduler = PriorityScheduler.Current!;
                var items = lowerLanes.Reverse().Select(l => scheduler.GetLane(l.Name).Run(() => ranAt.Add((l.Name, clock.Elapsed)))).ToList();
                var urgent = scheduler.GetLane("Urgent").Run(async () =>
                {
                    for (var i = 0; i < 10; i++)
                    {
                        urgentSlices++;
                        clock.Advance(TimeSpan.FromMilliseconds(400));
                        await PriorityScheduler.YieldTo(LanePriority.FromRank(0));
                    }
                });
                await Task.WhenAll(items.Append(urgent));
            },
            new PrioritySchedulerOptions { TimeProvider = clock, Lanes = [new LaneOptions("Urgent", starvationBound: urgentBound), .. lowerLanes] });
        return (ranAt, urgentSlices);
    }
}
