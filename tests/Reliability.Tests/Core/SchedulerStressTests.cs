using PriorityAsync.Reliability.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>
/// Both schedulers under many posting threads, and stopped at random moments while threads post, timers fire and lane
/// runs are suspended: nothing is lost, duplicated or misrouted, nothing throws, nothing hangs.
/// </summary>
public class SchedulerStressTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData(SchedulerKind.ContextThread)]
    [InlineData(SchedulerKind.Dedicated)]
    [InlineData(SchedulerKind.ThreadPool)]
    public async Task ManyPostingThreads_NothingLostDuplicatedOrMisrouted(SchedulerKind kind)
    {
        const int Posters = 8;
        var perPoster = ReliabilitySettings.Long ? 250_000 : 25_000;
        await using var under = new SchedulerUnderTest(kind, TimeSpan.FromSeconds(30));
        var load = new PostingLoad(Posters, perPoster);
        var unhandled = 0;
        under.Scheduler.UnhandledException += (_, _) => Interlocked.Increment(ref unhandled);

        var posters = Enumerable.Range(0, Posters).Select(p => new Thread(() => load.Post(under.Scheduler, p, new Random(p))) { IsBackground = true }).ToArray();
        foreach (var poster in posters)
        {
            poster.Start();
        }

        foreach (var poster in posters)
        {
            poster.Join(Generous).Should().BeTrue("posting never blocks for long");
        }

        await under.StopAsync(dispose: false).WaitAsync(Generous);
        output.WriteLine($"{kind}: {load.Total} items from {Posters} threads");
        load.NeverRan(_ => perPoster).Should().Be(0, "every item posted before the stop runs");
        load.Duplicated.Should().Be(0);
        load.RanRejected.Should().Be(0, "nothing was posted after the stop");
        unhandled.Should().Be(0);
        if (kind == SchedulerKind.ContextThread)
        {
            load.FifoPerPosterAndLane().Should().BeTrue("one thread runs a lane's items in the order they were posted");
        }
    }

    [Theory]
    [InlineData(SchedulerKind.ContextThread)]
    [InlineData(SchedulerKind.Dedicated)]
    [InlineData(SchedulerKind.ThreadPool)]
    public async Task StopAtRandomMoments_WhilePostingTimersAndSuspendedRuns_EveryItemRunsOnce_AndEveryAwaiterResumes(SchedulerKind kind)
    {
        var rounds = ReliabilitySettings.Long ? 500 : 25;
        var baseSeed = ReliabilitySettings.ReplaySeed ?? 1;
        for (var round = 0; round < rounds; round++)
        {
            var seed = baseSeed + round;
            var replay = $"seed {seed}: PRIORITYASYNC_SWARM_SEED={seed} dotnet test tests/Reliability.Tests -c Release --filter \"FullyQualifiedName~StopAtRandomMoments&FullyQualifiedName~{kind}\"";
            await RunRoundAsync(kind, seed, replay);
        }
    }

    private static async Task RunRoundAsync(SchedulerKind kind, int seed, string replay)
    {
        var random = new Random(seed);
        const int Posters = 4;
        const int PerPoster = 2_000;
        var shutdownTimeout = TimeSpan.FromMilliseconds(random.Next(3) switch { 0 => 0, 1 => 20, _ => 2_000 });
        var dispose = random.Next(2) == 0;
        var stopAfter = TimeSpan.FromMilliseconds(random.Next(0, 30));
        await using var under = new SchedulerUnderTest(kind, shutdownTimeout);
        var scheduler = under.Scheduler;
        var unhandled = 0;
        scheduler.UnhandledException += (_, _) => Interlocked.Increment(ref unhandled);
        var load = new PostingLoad(Posters, PerPoster);
        var stopPosting = 0;
        var posted = new int[Posters];
        var posters = Enumerable.Range(0, Posters).Select(p => new Thread(() =>
        {
            var posterRandom = new Random(seed * 31 + p);
            load.Post(scheduler, p, posterRandom, () =>
            {
                if (Volatile.Read(ref stopPosting) != 0)
                {
                    return false;
                }

                posted[p]++;
                return true;
            });
        }) { IsBackground = true }).ToArray();

        // Suspended lane runs: awaiting an outside completion, a plain delay and the scheduler's own timer.
        var external = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var resumed = 0;
        var runs = new List<Task>();
        for (var i = 0; i < 6; i++)
        {
            var which = i % 3;
            runs.Add(scheduler.Lanes[i % scheduler.Lanes.Count].Run(async () =>
            {
                try
                {
                    await (which switch
                    {
                        0 => external.Task,
                        1 => Task.Delay(random.Next(1, 40)),
                        _ => Task.Delay(TimeSpan.FromMilliseconds(20), scheduler.TimeProvider),
                    });
                    await Task.Yield();
                }
                finally
                {
                    Interlocked.Increment(ref resumed);
                }
            }));
        }

        var ticks = 0;
        using var periodic = scheduler.TimeProvider.CreateTimer(_ => Interlocked.Increment(ref ticks), null, TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(3));
        foreach (var poster in posters)
        {
            poster.Start();
        }

        await Task.Delay(stopAfter);
        var stop = under.StopAsync(dispose);
        await Task.Delay(random.Next(0, 10));
        Volatile.Write(ref stopPosting, 1);
        foreach (var poster in posters)
        {
            poster.Join(Generous).Should().BeTrue($"posting never blocks ({replay})");
        }

        external.SetResult(); // completes the runs still waiting, during or after the stop
        await stop.WaitAsync(Generous);
        await Task.WhenAll(runs).WaitAsync(Generous);
        var deadline = DateTime.UtcNow + Generous;
        while (load.NeverRan(p => posted[p]) > 0 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }

        resumed.Should().Be(runs.Count, $"every suspended run resumed and ran its finally ({replay})");
        load.NeverRan(p => posted[p]).Should().Be(0, $"every posted item ran, in its lane or on the pool ({replay})");
        load.Duplicated.Should().Be(0, replay);
        scheduler.RejectedWorkCount.Should().BeGreaterThanOrEqualTo(load.RanRejected, replay);
        unhandled.Should().Be(0, replay);
        Action start = () => _ = scheduler.Lanes[0].Run(() => { });
        start.Should().Throw<InvalidOperationException>($"new work is refused after the stop, unwrapped ({replay})")
            .Which.Should().Match<InvalidOperationException>(e => e is ObjectDisposedException || !dispose);
    }
}
