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

    /// <summary>
    /// Creates the keeper of <paramref name="run"/> as docs/keep-your-servicebusprocessor.md tells users to
    /// (<c>new LeaseKeeper(scheduler)</c>: the default renewal rule, min(half the lock left, 10 s)). Not the pump rows'
    /// renewal buffer (lease less renew interval): the Service Bus adapter tells the keeper the lock left at
    /// <c>Keep</c> as the lock duration, and a keeper whose buffer is not below it refuses that hint and keeps the
    /// message without pipelining, each renewal waiting for the last one's answer — on the starved pool, for a pool thread.
    /// </summary>
    /// <param name="run">The run (its keeper is named after the simulation).</param>
    /// <param name="scheduler">The keeper's scheduler.</param>
    /// <returns>The keeper; the caller disposes it.</returns>
    public static LeaseKeeper CreateKeeper(ScenarioRun run, PriorityScheduler scheduler)
    {
        ArgumentNullException.ThrowIfNull(run);
        return new LeaseKeeper(scheduler, new LeaseKeeperOptions { Name = "lease-simulation-keeper" });
    }
}
