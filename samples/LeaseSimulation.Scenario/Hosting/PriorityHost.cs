using LeaseSimulation.Baselines;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using PriorityAsync;

namespace LeaseSimulation.Hosting;

/// <summary>
/// Where PriorityAsync code runs: on one thread, a <see cref="PriorityAsyncContext"/> (on the run's virtual clock
/// when it has one); hosted, the lanes of a <see cref="HostedPriorityScheduler"/> on a single-thread host loop (<see cref="HostLoop"/>); otherwise a <see cref="PriorityTaskScheduler"/> with dedicated worker threads.
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
    /// Runs <paramref name="entry"/> in the Receive lane of a <see cref="HostedPriorityScheduler"/> hosted on
    /// <paramref name="host"/> (a single-thread context the consumer does not own: a UI thread's), then stops the
    /// scheduler. Call it on the host's thread (a WinForms event handler does).
    /// </summary>
    /// <param name="host">The single-thread, FIFO context the lanes run on.</param>
    /// <param name="run">The run (its virtual clock, if any, is the scheduler's <see cref="PriorityScheduler.TimeProvider"/>).</param>
    /// <param name="entry">The consumer's entry point, given the scheduler.</param>
    /// <returns>A task that completes when the consumer has finished and the scheduler has stopped.</returns>
    public static async Task RunHostedAsync(SynchronizationContext host, ScenarioRun run, Func<PriorityScheduler, Task> entry)
    {
        ArgumentNullException.ThrowIfNull(host);
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(entry);
        var scheduler = new HostedPriorityScheduler(host, new PrioritySchedulerOptions { TimeProvider = run.Clock.VirtualTime });
        try
        {
            await scheduler.GetLane(LanePriority.Receive).Run(() => entry(scheduler)).ConfigureAwait(true);
        }
        finally
        {
            await scheduler.DisposeAsync().ConfigureAwait(true);
        }
    }

    /// <summary>
    /// The consumer on a thread it does not own: the host's loop (<see cref="HostLoop"/>: Nito.AsyncEx's
    /// <c>AsyncContext</c> on the real clock, a <see cref="FifoSingleThreadContext"/> on virtual time) runs the lanes of a
    /// <see cref="HostedPriorityScheduler"/> hosted on it.
    /// </summary>
    private static void RunHosted(ScenarioRun run, Func<PriorityScheduler, Task> entry) =>
        HostLoop.Run(run, () => RunHostedAsync(SynchronizationContext.Current!, run, entry));
}
