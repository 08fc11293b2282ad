using Nito.AsyncEx;

namespace PriorityAsync.Tests.Docs;

/// <summary>
/// The examples of docs/concepts.md, compiled and run so that the page stays true. Each region is quoted in the page.
/// </summary>
public class ConceptsExamples
{
    [Fact]
    public void SingleThread_LeaseBeforeProcessing()
    {
        var log = new List<string>();

        // <single-thread>
        var clock = new VirtualTimeProvider();                    // or omit TimeProvider for real time
        PriorityAsyncContext.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            var keepLease = scheduler.GetLane(LanePriority.Lease).Run(async () =>
            {
                for (var renewal = 0; renewal < 3; renewal++)
                {
                    await Task.Delay(TimeSpan.FromSeconds(10), scheduler.TimeProvider); // stays in Lease
                    log.Add($"renewed at {clock.Elapsed.TotalSeconds:0}s");
                }
            });
            var process = scheduler.GetLane(LanePriority.Processing).Run(async () =>
            {
                for (var chunk = 0; chunk < 4; chunk++)
                {
                    clock.Advance(TimeSpan.FromSeconds(8));               // 8 s of CPU holding the thread
                    await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider); // stays in Processing
                }
            });
            await Task.WhenAll(keepLease, process);
        }, new PrioritySchedulerOptions { TimeProvider = clock });

        // </single-thread>
        // The first renewal fell due at 10 s, inside the 9–17 s slice: no scheduler preempts a running slice, so it
        // ran at 17 s, first in line. Every later renewal is on time although processing keeps the thread busy.
        log.Should().Equal("renewed at 17s", "renewed at 27s", "renewed at 37s");
    }

    [Fact]
    public async Task MultiThread_LanesOnDedicatedWorkers()
    {
        // <multi-thread>
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions
        {
            WorkerCount = 2,                                 // default: Environment.ProcessorCount
            Mode = PriorityWorkerMode.DedicatedThreads,      // or PriorityWorkerMode.ThreadPool
        });
        var lease = scheduler.GetLane(LanePriority.Lease);
        var renewed = await lease.Run(async () =>
        {
            await Task.Delay(TimeSpan.FromMilliseconds(20), scheduler.TimeProvider); // no thread-pool thread needed
            return PriorityScheduler.CurrentLane!.Name;                             // "Lease"
        });

        // </multi-thread>
        renewed.Should().Be("Lease");
    }

    [Fact]
    public void CustomLanes_YieldTo_AndShouldYield()
    {
        var log = new List<string>();

        // <custom-lanes>
        var options = new PrioritySchedulerOptions
        {
            Lanes =
            [
                new LaneOptions("Input"),
                new LaneOptions("Render"),
                new LaneOptions("Background", starvationBound: TimeSpan.FromMilliseconds(250)),
            ],
            YieldQuantum = TimeSpan.FromMilliseconds(5),     // ShouldYield also turns true after 5 ms
        };
        PriorityAsyncContext.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            await PriorityScheduler.YieldTo(scheduler.GetLane("Background").Priority);
            for (var item = 0; item < 1_000; item++)
            {
                Crunch(item);
                if (scheduler.ShouldYield)                       // no lock, no clock: cheap enough per item
                {
                    await PriorityScheduler.YieldIfNeeded();     // lets Input and Render run, then resumes here
                }
            }

            log.Add($"done in {PriorityScheduler.CurrentLane!.Name}");
        }, options);

        // </custom-lanes>
        log.Should().Equal("done in Background");

        static void Crunch(int item) => Thread.SpinWait(10 + (item % 7));
    }

    [Fact]
    public async Task Stopping_WaitsForLaneRuns_AndReportsLateWork()
    {
        var log = new List<string>();

        // <stopping>
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions
        {
            WorkerCount = 2,
            ShutdownTimeout = TimeSpan.FromSeconds(5),          // how long a stop waits for lane runs
        });
        scheduler.RejectedWork += (_, e) => log.Add($"late {e.Kind} for {e.Lane.Name}");
        var renewal = scheduler.GetLane(LanePriority.Lease).Run(async () =>
        {
            await Task.Delay(TimeSpan.FromMilliseconds(50));    // completes on the thread pool, during the stop
            log.Add($"renewed in {PriorityScheduler.CurrentLane?.Name}");
        });
        await scheduler.DisposeAsync();                         // waits for the renewal: it is a lane run
        await renewal;
        log.Add($"rejected {log.Count(line => line.StartsWith("late", StringComparison.Ordinal))}");
        // </stopping>

        log.Should().Equal("renewed in Lease", "rejected 0");
    }

    [Fact]
    public void Hosted_LanesOnAThreadYouDoNotOwn()
    {
        var log = new List<string>();

        // <hosted>
        AsyncContext.Run(async () =>          // the host: a single-thread FIFO context (Nito.AsyncEx here; a UI thread's in an app)
        {
            await using var scheduler = new HostedPriorityScheduler(SynchronizationContext.Current!);
            var processing = scheduler.GetLane(LanePriority.Processing).Run(async () =>
            {
                for (var chunk = 0; chunk < 3; chunk++)
                {
                    log.Add($"chunk {chunk}");
                    await PriorityScheduler.YieldIfNeeded();       // more urgent lanes first; still the host's thread
                }
            });
            var lease = scheduler.GetLane(LanePriority.Lease).Run(() =>
            {
                log.Add("lease renewed");
                return Task.CompletedTask;
            });
            await Task.WhenAll(processing, lease);
        });

        // </hosted>
        log.Should().Equal("lease renewed", "chunk 0", "chunk 1", "chunk 2");
    }
}
