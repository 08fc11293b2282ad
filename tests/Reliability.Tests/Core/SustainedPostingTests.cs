using PriorityAsync.Reliability.Tests.Support;

namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>
/// A stop requested while threads keep posting must still end: it waits for ShutdownTimeout and the items queued at
/// that moment, never for the posters: with posters that never pause, a stop that waits for empty lanes never ends.
/// </summary>
public class SustainedPostingTests
{
    // How many posted items may wait at once. The posters keep the lanes this full all the time (so the lanes are never
    // empty, which is what an end check made only on empty lanes would wait for), while the work queued at any moment,
    // and so what a stop has to run, stays bounded whatever the machine's load does to the posters' and workers' speeds.
    private const int MaxQueued = 4_000;

    [Theory]
    [InlineData(CoreSchedulerUnderTest.ContextThread)]
    [InlineData(CoreSchedulerUnderTest.Dedicated1)]
    [InlineData(CoreSchedulerUnderTest.Pool3)]
    public void Stop_WhilePostersNeverPause_CompletesWithinTheShutdownTimeoutBound(string kind)
    {
        using var target = CoreSchedulerUnderTest.Create(kind, TimeSpan.FromSeconds(1));
        var scheduler = target.Scheduler;
        var running = 1;
        long posted = 0;
        long ran = 0;
        SendOrPostCallback item = _ => Interlocked.Increment(ref ran);
        var posters = Enumerable.Range(0, 4).Select(p => new Thread(() =>
        {
            var lane = scheduler.Lanes[p % scheduler.Lanes.Count].SynchronizationContext;
            while (Volatile.Read(ref running) == 1)
            {
                if (Volatile.Read(ref posted) - Volatile.Read(ref ran) < MaxQueued)
                {
                    Interlocked.Increment(ref posted);
                    lane.Post(item, null);
                }
                else
                {
                    Thread.Yield();
                }
            }
        })
        { IsBackground = true, Name = $"poster {p}" }).ToArray();
        foreach (var poster in posters)
        {
            poster.Start();
        }

        // Posting is under way (measured, not slept for) before the stop.
        SpinWait.SpinUntil(() => Volatile.Read(ref ran) >= MaxQueued, Bounded.Patient).Should().BeTrue("{0} runs what is posted", kind);
        target.Stop(dispose: false);
        long postedWhenStopped;
        try
        {
            // What the stop waits for: ShutdownTimeout (1 s, on the scheduler's own timer thread), then at most the
            // MaxQueued no-op items queued when it closes; never for the posters, which go on. Nothing in that depends on
            // the machine's speed beyond running 4 000 empty callbacks, so the generous bound (60 s) only turns a stop
            // that waits for the posters (the defect) into a failure instead of a hang.
            Bounded.Wait(target.Completion, $"the stop of {kind} while posters never pause", Bounded.Patient);
            postedWhenStopped = Volatile.Read(ref posted);
            SpinWait.SpinUntil(() => Volatile.Read(ref posted) > postedWhenStopped, Bounded.Patient)
                .Should().BeTrue("the posters were still posting after {0} stopped: the stop did not wait for them", kind);
        }
        finally
        {
            Volatile.Write(ref running, 0);
            foreach (var poster in posters)
            {
                Bounded.Join(poster, Bounded.Patient);
            }
        }

        // Every item ran exactly once: in its lane before the close, or on the thread pool after it (counted there).
        SpinWait.SpinUntil(() => Volatile.Read(ref ran) == Volatile.Read(ref posted), Bounded.Patient)
            .Should().BeTrue("each of the {0} posted items runs once ({1} ran)", Volatile.Read(ref posted), Volatile.Read(ref ran));
        Volatile.Read(ref ran).Should().Be(Volatile.Read(ref posted));
        scheduler.RejectedWorkCount.Should().BeGreaterThan(0, "posts after the stop are late work");
    }
}
