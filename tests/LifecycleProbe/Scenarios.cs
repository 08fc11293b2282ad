using PriorityAsync.MessagePump;

namespace PriorityAsync.LifecycleProbe;

/// <summary>
/// The reproductions of the lifecycle failures: without the shutdown contract (docs/design.md) each one aborts the
/// process, because work reaches a stopped scheduler and the lane throws inside the runtime's continuation machinery.
/// </summary>
internal static class Scenarios
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(30);

    public static IReadOnlyDictionary<string, Func<Task<ScenarioResult>>> All { get; } = new Dictionary<string, Func<Task<ScenarioResult>>>
    {
        ["run-then-complete"] = () => RunThenStopAsync(s => s.Complete()),
        ["run-then-dispose"] = () => RunThenStopAsync(s => s.Dispose()),
        ["readme-quick-start"] = ReadmeQuickStartAsync,
        ["dispose-async-inside-lane"] = DisposeAsyncInsideLaneAsync,
        ["switch-to-completed-scheduler"] = SwitchToCompletedSchedulerAsync,
        ["context-thread-join-with-pool-timer"] = ContextThreadJoinWithPoolTimerAsync,
        ["pump-handler-outlives-stop-and-dispose"] = PumpHandlerOutlivesStopAndDisposeAsync,
    };

    /// <summary>A lane awaits a plain (thread-pool) delay; the scheduler stops with no grace period meanwhile.</summary>
    private static async Task<ScenarioResult> RunThenStopAsync(Action<PriorityTaskScheduler> stop)
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, ShutdownTimeout = TimeSpan.Zero });
        var resumed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var work = scheduler.GetLane(LanePriority.Processing).Run(async () =>
        {
            await Task.Delay(200);
            resumed.TrySetResult();
        });
        stop(scheduler);
        await scheduler.Completion.WaitAsync(Generous);
        await resumed.Task.WaitAsync(Generous);
        await work.WaitAsync(Generous);
        return new(scheduler.RejectedWorkCount >= 1, $"rejected={scheduler.RejectedWorkCount}");
    }

    /// <summary>The README quick start, completed the way a newcomer would: a lease loop on a plain Task.Delay.</summary>
    private static async Task<ScenarioResult> ReadmeQuickStartAsync()
    {
        PriorityScheduler? context = null;
        var renewals = 0;
        PriorityAsyncContext.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            context = scheduler;
            _ = scheduler.GetLane(LanePriority.Lease).Run(KeepLeaseAsync);
            await scheduler.GetLane(LanePriority.Processing).Run(ProcessAsync);
        });

        var atReturn = Volatile.Read(ref renewals);
        var deadline = DateTime.UtcNow + Generous;
        while (Volatile.Read(ref renewals) < atReturn + 2 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(20);
        }

        var after = Volatile.Read(ref renewals);
        return new(after >= atReturn + 2 && context!.RejectedWorkCount >= 1, $"renewals-after-run={after - atReturn} rejected={context!.RejectedWorkCount}");

        async Task KeepLeaseAsync()
        {
            while (true)
            {
                await Task.Delay(30);
                Interlocked.Increment(ref renewals);
            }
        }

        static async Task ProcessAsync() => await Task.Delay(100);
    }

    /// <summary><c>await scheduler.DisposeAsync()</c> from inside a lane: its caller resumes afterwards.</summary>
    private static async Task<ScenarioResult> DisposeAsyncInsideLaneAsync()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var resumedIn = await scheduler.GetLane(LanePriority.Processing).Run(async () =>
        {
            await scheduler.DisposeAsync();
            return PriorityScheduler.CurrentLane?.Name ?? "no lane";
        }).WaitAsync(Generous);
        await scheduler.Completion.WaitAsync(Generous);
        return new(true, $"resumed-in={resumedIn} rejected={scheduler.RejectedWorkCount}");
    }

    /// <summary><c>await lane.SwitchTo()</c> on a scheduler that has completed: the code after it still runs.</summary>
    private static async Task<ScenarioResult> SwitchToCompletedSchedulerAsync()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        scheduler.Complete();
        await scheduler.Completion.WaitAsync(Generous);
        var lane = scheduler.GetLane(LanePriority.Lease);
        await SwitchAsync().WaitAsync(Generous);
        return new(scheduler.RejectedWorkCount == 1, $"rejected={scheduler.RejectedWorkCount}");

        async Task SwitchAsync() => await lane.SwitchTo();
    }

    /// <summary><c>JoinAsync</c> while a task in the context thread awaits a thread-pool timer.</summary>
    private static async Task<ScenarioResult> ContextThreadJoinWithPoolTimerAsync()
    {
        var thread = new PriorityAsyncContextThread(new PrioritySchedulerOptions { ShutdownTimeout = TimeSpan.Zero });
        var resumed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        _ = thread.RunAsync(LanePriority.Processing, async () =>
        {
            await Task.Delay(200);
            resumed.TrySetResult();
        });
        await thread.JoinAsync().WaitAsync(Generous);
        await resumed.Task.WaitAsync(Generous);
        await thread.DisposeAsync();
        return new(thread.Context.RejectedWorkCount >= 1, $"rejected={thread.Context.RejectedWorkCount}");
    }

    /// <summary>A pump handler that ignores its token outlives <c>StopAsync</c> and the scheduler's disposal.</summary>
    private static async Task<ScenarioResult> PumpHandlerOutlivesStopAndDisposeAsync()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, ShutdownTimeout = TimeSpan.Zero });
        var queue = new InMemoryTransport().CreateQueue("orders");
        queue.Send(new byte[] { 1 });
        var started = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var finished = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var pump = new PriorityMessagePump(
            queue,
            async (_, _) =>
            {
                started.TrySetResult();
                await Task.Delay(500); // ignores its token
                finished.TrySetResult();
            },
            scheduler,
            new MessagePumpOptions { ShutdownTimeout = TimeSpan.FromMilliseconds(50) });
        await pump.StartAsync();
        await started.Task.WaitAsync(Generous);
        await pump.StopAsync().WaitAsync(Generous);
        await scheduler.DisposeAsync();
        await finished.Task.WaitAsync(Generous);
        return new(queue.GetStatistics().InFlight == 0, $"broker-in-flight={queue.GetStatistics().InFlight} rejected={scheduler.RejectedWorkCount}");
    }
}
