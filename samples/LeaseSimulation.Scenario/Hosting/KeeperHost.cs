using LeaseSimulation.Running;
using PriorityAsync;
using PriorityAsync.MessagePump;

namespace LeaseSimulation.Hosting;

/// <summary>
/// Where the keeper strategies' <see cref="LeaseKeeper"/> runs (<c>processor-keeper</c>, <c>receiver-keeper</c>): the
/// reserved lease worker of a <see cref="PriorityTaskScheduler"/> of its own, in every context, as an application that
/// keeps its processor adds it (one ordinary worker, unused, and the reserved one).
/// </summary>
public static class KeeperHost
{
    /// <summary>Creates the keeper's scheduler.</summary>
    /// <returns>The scheduler; the caller disposes it after the keeper.</returns>
    public static PriorityTaskScheduler CreateScheduler() =>
        new(new PriorityTaskSchedulerOptions { Name = "lease keeper", WorkerCount = 1, Mode = PriorityWorkerMode.DedicatedThreads });

    /// <summary>Creates the keeper of <paramref name="run"/>: its renewal buffer is the lease less the renew interval, as the pump's rows.</summary>
    /// <param name="run">The run.</param>
    /// <param name="scheduler">The keeper's scheduler.</param>
    /// <returns>The keeper; the caller disposes it.</returns>
    public static LeaseKeeper CreateKeeper(ScenarioRun run, PriorityScheduler scheduler)
    {
        ArgumentNullException.ThrowIfNull(run);
        var settings = run.Settings;
        return new LeaseKeeper(scheduler, new LeaseKeeperOptions
        {
            Name = "lease-simulation-keeper",
            LockRenewalBuffer = (settings.LeaseDuration - settings.RenewInterval) * settings.TimeScale,
        });
    }
}
