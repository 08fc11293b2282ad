using LeaseSimulation.Brokers;
using LeaseSimulation.Consumers;
using LeaseSimulation.Hosting;
using LeaseSimulation.Running;

namespace LeaseSimulation.Strategies;

/// <summary>The seed's own fix: its priority-bumping protocol after every await, on the same hosts as <c>fifo</c>.</summary>
public sealed class SeedYieldStrategy : ConsumerStrategy
{
    /// <inheritdoc />
    public override string Name => "seed-yield";

    /// <inheritdoc />
    public override string Description => "The seed's priority-bumping protocol (yield until it is your turn) after every await.";

    /// <inheritdoc />
    public override void Run(ScenarioRun run)
    {
        ArgumentNullException.ThrowIfNull(run);
        using var broker = run.Settings.Broker == LeaseSimulation.Settings.BrokerKind.Postgres ? PostgresScenarioQueue.Create(run.Settings, Name) : null;
        var consumer = new SeedConsumer(run, new SeedProtocolOrdering(run.Clock.TimeProvider), broker?.Queue);
        UnprioritisedHost.Run(run, consumer.RunAsync);
    }
}
