using LeaseSimulation.Baselines;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using PriorityAsync;

namespace LeaseSimulation.Hosting;

/// <summary>
/// Where PriorityAsync code runs: on one thread, a <see cref="PriorityAsyncContext"/> (on the run's virtual clock
/// when it has one); hosted, the lanes of a <see cref="HostedPriorityScheduler"/> on a FIFO single-thread context; otherwise a <see cref="PriorityTaskScheduler"/> with dedicated worker threads.
/// </summary>
public static class PriorityHost
{
    /// <summary>Runs <paramref name="entry"/> in the Receive lane of a scheduler for <paramref name="run"/> and waits for it.</summary>
    /// <param name="run">The run.</param>
    /// <param name="entry">The consumer's entry point, given the scheduler.</param>
    public static void Run(ScenarioRun run, Func<PriorityScheduler, Task> entry)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(entry);
        if (run.Settings.Context == ContextKind.SingleThread)
        {
            using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { TimeProvider = run.Clock.VirtualTime });
            context.Execute(LanePriority.Receive, () => entry(context));
            return;
        }

        if (run.Settings.Context == ContextKind.Hosted)
        {
            RunHosted(run, entry);
            return;
        }

        using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions
        {
            WorkerCount = run.Settings.Threads,
            Mode = PriorityWorkerMode.DedicatedThreads,
        });
        scheduler.GetLane(LanePriority.Receive).Run(() => entry(scheduler)).GetAwaiter().GetResult();
    }

    /// <summary>
    /// The consumer on a thread it does not own: a <see cref="FifoSingleThreadContext"/> (the UI-thread stand-in) runs
    /// the host's loop, and the lanes of a <see cref="HostedPriorityScheduler"/> run on it.
    /// </summary>
    private static void RunHosted(ScenarioRun run, Func<PriorityScheduler, Task> entry) =>
        FifoSingleThreadContext.Run(
            async () =>
            {
                var scheduler = new HostedPriorityScheduler(
                    SynchronizationContext.Current!,
                    new PrioritySchedulerOptions { TimeProvider = run.Clock.VirtualTime });
                try
                {
                    await scheduler.GetLane(LanePriority.Receive).Run(() => entry(scheduler)).ConfigureAwait(true);
                }
                finally
                {
                    await scheduler.DisposeAsync().ConfigureAwait(true);
                }
            },
            run.Clock.VirtualTime);
}
