using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using PriorityAsync;

namespace LeaseSimulation.Hosting;

/// <summary>
/// Where PriorityAsync code runs: on one thread, a <see cref="PriorityAsyncContext"/> (on the run's virtual clock
/// when it has one); otherwise a <see cref="PriorityTaskScheduler"/> with dedicated worker threads.
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

        using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions
        {
            WorkerCount = run.Settings.Threads,
            Mode = PriorityWorkerMode.DedicatedThreads,
        });
        scheduler.GetLane(LanePriority.Receive).Run(() => entry(scheduler)).GetAwaiter().GetResult();
    }
}
