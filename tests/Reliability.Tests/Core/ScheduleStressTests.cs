using PriorityAsync.Reliability.Tests.Support;

namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>Scenario 1: many threads post into random lanes through every entry point; nothing is lost, duplicated or reordered.</summary>
public class ScheduleStressTests
{
    private const int Posters = 8;

    [Theory]
    [InlineData(CoreSchedulerUnderTest.Dedicated1)]
    [InlineData(CoreSchedulerUnderTest.Pool1)]
    [InlineData(CoreSchedulerUnderTest.Dedicated4)]
    [InlineData(CoreSchedulerUnderTest.Pool3)]
    [InlineData(CoreSchedulerUnderTest.ContextThread)]
    public void ScheduleStress_ManyPostersEveryEntryPoint_NothingLostDuplicatedOrInverted(string kind) =>
        CoreReliabilityRun.ForEachSeed(1, 5, seed => RunOnce(kind, seed, CoreReliabilityRun.Scale(40_000, 2_000_000)));

    private static void RunOnce(string kind, int seed, int total)
    {
        using var target = CoreSchedulerUnderTest.Create(kind);
        var lanes = target.Scheduler.Lanes;
        var log = new CoreDispatchLog(total);
        var perPoster = total / Posters;
        using var go = new ManualResetEventSlim();
        var failures = new System.Collections.Concurrent.ConcurrentQueue<Exception>();
        var threads = Enumerable.Range(0, Posters).Select(poster => new Thread(() =>
        {
            try
            {
                var random = new Random(HashCode.Combine(seed, poster));
                var sequences = new int[lanes.Count];
                go.Wait();
                for (var k = 0; k < perPoster; k++)
                {
                    var id = (poster * perPoster) + k;
                    var lane = lanes[random.Next(lanes.Count)];
                    log.Register(id, poster, lane.Priority.Rank, sequences[lane.Priority.Rank]++);
                    Post(lane, random.Next(4), id, log);
                    log.Posted(id);
                }
            }
            catch (Exception e)
            {
                failures.Enqueue(e);
            }
        })
        { Name = $"poster {poster}", IsBackground = true }).ToArray();

        foreach (var thread in threads)
        {
            thread.Start();
        }

        go.Set();
        foreach (var thread in threads)
        {
            Bounded.Join(thread, Bounded.Patient);
        }

        failures.Should().BeEmpty();
        var count = perPoster * Posters;
        var deadline = DateTime.UtcNow + Bounded.Patient;
        while (log.RanCount < count && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(5);
        }

        target.Dispose();
        log.AssertExactlyOnce(count);
        target.Scheduler.RejectedWorkCount.Should().Be(0);
        if (target.OneAtATime)
        {
            log.AssertFifoPerPosterAndLane(count);
            log.AssertDispatchRule(count, lanes.Count);
        }
    }

    private static void Post(Lane lane, int entryPoint, int id, CoreDispatchLog log)
    {
        switch (entryPoint)
        {
            case 0:
                lane.SynchronizationContext.Post(static s => ((Item)s!).Run(), new Item(id, log));
                break;
            case 1:
                _ = lane.Run(new Item(id, log).Run);
                break;
            case 2:
                _ = lane.TaskFactory.StartNew(new Item(id, log).Run);
                break;
            default:
                _ = SwitchAndRun(lane, id, log);
                break;
        }
    }

    private static async Task SwitchAndRun(Lane lane, int id, CoreDispatchLog log)
    {
        await lane.SwitchTo();
        new Item(id, log).Run();
    }

    private sealed class Item(int id, CoreDispatchLog log)
    {
        public void Run() => log.Ran(id, PriorityScheduler.CurrentLane?.Priority.Rank ?? -1);
    }
}
