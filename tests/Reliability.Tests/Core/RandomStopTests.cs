using System.Collections.Concurrent;
using PriorityAsync.Reliability.Tests.Support;

namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>
/// Scenario 2: Dispose or Complete at a random moment while threads post, timers fire and lane runs are suspended on
/// external awaits. Every posted callback runs exactly once (in its lane, or rejected to the pool), every awaiting
/// method resumes, nothing escapes, the stop completes, and starting work afterwards fails with the documented types.
/// </summary>
public class RandomStopTests
{
    private static readonly string[] Kinds =
    [
        CoreSchedulerUnderTest.Dedicated1, CoreSchedulerUnderTest.Dedicated4, CoreSchedulerUnderTest.Pool1,
        CoreSchedulerUnderTest.Pool3, CoreSchedulerUnderTest.ContextThread,
    ];

    private static readonly TimeSpan?[] Timeouts = [TimeSpan.Zero, TimeSpan.FromMilliseconds(20), null];

    [Fact]
    public void RandomStop_WhilePostingTimingAndAwaiting_EveryCallbackRunsOnceAndEveryAwaitResumes() =>
        CoreReliabilityRun.ForEachSeed(6, 300, RunOnce);

    private static void RunOnce(int seed)
    {
        var random = new Random(seed);
        var kind = Kinds[random.Next(Kinds.Length)];
        var timeout = Timeouts[random.Next(Timeouts.Length)];
        var dispose = random.Next(2) == 0;
        var stopAfter = TimeSpan.FromMilliseconds(random.Next(0, 40));
        var postersCount = 4;

        using var target = CoreSchedulerUnderTest.Create(kind, timeout);
        var scheduler = target.Scheduler;
        var counters = new Counters();
        var unexpected = new ConcurrentQueue<string>();
        var rejectedByKind = new long[4];
        scheduler.UnhandledException += (_, e) => unexpected.Enqueue($"UnhandledException in {e.Lane}: {e.Exception}");
        scheduler.RejectedWork += (_, e) => Interlocked.Increment(ref rejectedByKind[(int)e.Kind]);
        var pending = new ConcurrentQueue<TaskCompletionSource>();
        var stopped = 0;
        var finished = 0;

        var posters = Enumerable.Range(0, postersCount).Select(p => new Thread(() =>
        {
            var r = new Random(HashCode.Combine(seed, p));
            try
            {
                // Keep posting a while after the stop, so late posts are part of the load.
                var lateUntil = long.MaxValue;
                while (Environment.TickCount64 < lateUntil)
                {
                    if (Volatile.Read(ref stopped) == 1 && lateUntil == long.MaxValue)
                    {
                        lateUntil = Environment.TickCount64 + r.Next(0, 20);
                    }

                    var lane = scheduler.Lanes[r.Next(scheduler.Lanes.Count)];
                    switch (r.Next(8))
                    {
                        case 0:
                            StartAwaitingRun(lane, r.Next(0, 5), counters, pending, unexpected);
                            break;
                        default:
                            Interlocked.Increment(ref counters.Posted);
                            lane.SynchronizationContext.Post(static s => ((PostedItem)s!).Run(), new PostedItem(lane, counters, unexpected));
                            break;
                    }
                }
            }
            catch (Exception e)
            {
                unexpected.Enqueue($"poster {p}: {e}");
            }
        })
        { IsBackground = true, Name = $"poster {p}" }).ToArray();

        var timers = new ConcurrentBag<ITimer>();
        var oneShotFires = new int[64];
        var timerThread = new Thread(() =>
        {
            var r = new Random(seed ^ 0x5EED);
            for (var i = 0; i < oneShotFires.Length; i++)
            {
                var index = i;
                var periodic = r.Next(4) == 0;
                timers.Add(scheduler.TimeProvider.CreateTimer(
                    _ => Interlocked.Increment(ref oneShotFires[index]),
                    null,
                    TimeSpan.FromMilliseconds(r.Next(0, 30)),
                    periodic ? TimeSpan.FromMilliseconds(r.Next(1, 5)) : Timeout.InfiniteTimeSpan));
                if (periodic)
                {
                    oneShotFires[index] = int.MinValue; // periodic: fires any number of times
                }

                Thread.Sleep(r.Next(0, 2));
            }
        })
        { IsBackground = true, Name = "timers" };

        var completer = new Thread(() =>
        {
            var r = new Random(seed ^ 0xC0DE);
            var giveUp = Environment.TickCount64 + (long)(2 * Bounded.Patient.TotalMilliseconds);
            while (Volatile.Read(ref finished) == 0 && Environment.TickCount64 < giveUp)
            {
                if (pending.TryDequeue(out var tcs))
                {
                    tcs.SetResult();
                }

                Thread.Sleep(r.Next(0, 2));
            }
        })
        { IsBackground = true, Name = "completer" };

        foreach (var t in posters.Append(timerThread).Append(completer))
        {
            t.Start();
        }

        Thread.Sleep(stopAfter);
        // Posters go on posting for up to 20 ms after the stop is requested (late posts), then end: a poster that never
        // ends keeps a draining context busy forever (see SustainedPostingTests).
        Volatile.Write(ref stopped, 1);
        target.Stop(dispose);
        foreach (var t in posters.Append(timerThread))
        {
            Bounded.Join(t, Bounded.Patient);
        }

        Bounded.Wait(target.Completion, $"Completion of {kind}", Bounded.Patient);

        // Periodic timers go on firing after the stop, and each firing is rejected: the count rises on the firing thread,
        // the event follows on the pool. Dispose them before comparing events with the count, and compare until both agree
        // (a firing already under way when its timer is disposed may still add one of each afterwards).
        foreach (var timer in timers)
        {
            timer.Dispose();
        }

        long RejectedEvents() => Interlocked.Read(ref rejectedByKind[0]) + Interlocked.Read(ref rejectedByKind[1]) + Interlocked.Read(ref rejectedByKind[2]) + Interlocked.Read(ref rejectedByKind[3]);

        Bounded.Wait(
            Task.Run(async () =>
            {
                while (Volatile.Read(ref counters.RanInLane) + Volatile.Read(ref counters.RanRejected) < Volatile.Read(ref counters.Posted)
                    || Volatile.Read(ref counters.Finallies) < Volatile.Read(ref counters.RunsStarted)
                    || RejectedEvents() != scheduler.RejectedWorkCount)
                {
                    while (pending.TryDequeue(out var tcs))
                    {
                        tcs.SetResult();
                    }

                    await Task.Delay(5);
                }
            }),
            $"every callback, await and rejection of {kind} (posted {counters.Posted}, ran {counters.RanInLane}+{counters.RanRejected}, runs {counters.RunsStarted}, finallies {counters.Finallies}, rejected events {RejectedEvents()} of {scheduler.RejectedWorkCount} counted)",
            Bounded.Patient);

        Volatile.Write(ref finished, 1);
        Bounded.Join(completer, Bounded.Patient);

        Action startAfterStop = () => scheduler.Lanes[0].Run(() => { });
        startAfterStop.Should().Throw<Exception>().Which.Should().Match(e => e is ObjectDisposedException || e.GetType() == typeof(InvalidOperationException), "lane.Run after the stop fails with the documented types, unwrapped");

        unexpected.Should().BeEmpty($"{kind}, timeout {timeout}, {(dispose ? "Dispose" : "Complete")}");
        (counters.RanInLane + counters.RanRejected).Should().Be(counters.Posted, "ran in lane + ran rejected == posted");
        counters.Finallies.Should().Be(counters.RunsStarted, "every awaiting lane run resumed and ran its finally");
        oneShotFires.Where(f => f >= 0).Should().OnlyContain(f => f <= 1, "a one-shot timer fires at most once");
        var posts = Interlocked.Read(ref rejectedByKind[(int)RejectedWorkKind.Post]);
        posts.Should().BeGreaterThanOrEqualTo(counters.RanRejected, "each of our rejected posts was counted as a post");
        (posts - counters.RanRejected).Should().BeLessThanOrEqualTo(2L * counters.RunsStarted, "the other rejected posts are the continuations of the awaiting runs, two awaits each");
        // RejectedWorkCount counts every RejectedWork event: the wait above ended on their equality, or failed at its bound.
    }

    private static void StartAwaitingRun(Lane lane, int delayMs, Counters counters, ConcurrentQueue<TaskCompletionSource> pending, ConcurrentQueue<string> unexpected)
    {
        try
        {
            _ = lane.Run(async () =>
            {
                try
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(delayMs), lane.Scheduler.TimeProvider);
                    var tcs = new TaskCompletionSource();
                    pending.Enqueue(tcs);
                    await tcs.Task;
                }
                finally
                {
                    Interlocked.Increment(ref counters.Finallies);
                }
            });
            Interlocked.Increment(ref counters.RunsStarted);
        }
        catch (Exception e) when (e is ObjectDisposedException || e.GetType() == typeof(InvalidOperationException))
        {
            // Starting new work after the stop fails loudly: the documented types, unwrapped.
        }
        catch (Exception e)
        {
            unexpected.Enqueue($"lane.Run threw {e.GetType().Name}: {e.Message}");
        }
    }

    private sealed class Counters
    {
        public int Posted;
        public int RanInLane;
        public int RanRejected;
        public int RunsStarted;
        public int Finallies;
    }

    private sealed class PostedItem(Lane lane, Counters counters, ConcurrentQueue<string> unexpected)
    {
        private int _runs;

        public void Run()
        {
            if (Interlocked.Increment(ref _runs) != 1)
            {
                unexpected.Enqueue("a posted callback ran twice");
            }

            if (PriorityScheduler.CurrentLane == lane)
            {
                Interlocked.Increment(ref counters.RanInLane);
            }
            else if (PriorityScheduler.CurrentLane is null && SynchronizationContext.Current is null)
            {
                Interlocked.Increment(ref counters.RanRejected);
            }
            else
            {
                unexpected.Enqueue($"a callback for {lane} ran in {PriorityScheduler.CurrentLane}");
            }
        }
    }
}
