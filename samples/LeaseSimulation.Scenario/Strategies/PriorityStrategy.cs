using LeaseSimulation.Brokers;
using LeaseSimulation.Consumers;
using LeaseSimulation.Hosting;
using LeaseSimulation.Running;

namespace LeaseSimulation.Strategies;

/// <summary>
/// The seed's code with one <c>YieldTo</c> per role (lease, processing, receive lanes) and the scheduler's timers, on a
/// PriorityAsync scheduler.
/// </summary>
public sealed class PriorityStrategy : ConsumerStrategy
{
    /// <inheritdoc />
    public override string Name => "priority";

    /// <inheritdoc />
    public override string Description => "The seed's code with YieldTo into lease / processing / receive lanes, on PriorityAsync.";

    /// <inheritdoc />
    public override int? MaxCpuThreads(LeaseSimulation.Settings.SimulationSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return settings.Threads; // the PriorityTaskScheduler's dedicated workers (PriorityHost)
    }

    /// <inheritdoc />
    public override void Run(ScenarioRun run)
    {
        ArgumentNullException.ThrowIfNull(run);
        using var broker = run.Settings.Broker == LeaseSimulation.Settings.BrokerKind.Postgres ? PostgresScenarioQueue.Create(run.Settings, Name) : null;
        PriorityHost.Run(run, scheduler => new SeedConsumer(run, new LaneOrdering(scheduler), broker?.Queue).RunAsync());
    }
}
