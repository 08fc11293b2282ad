using LeaseSimulation.Brokers;
using LeaseSimulation.Brokers.ServiceBus;
using LeaseSimulation.Consumers;
using LeaseSimulation.Hosting;
using LeaseSimulation.Running;

namespace LeaseSimulation.Strategies;

/// <summary>The seed's code as is: continuations run in arrival order (FIFO single thread, or the thread pool).</summary>
public sealed class FifoStrategy : ConsumerStrategy
{
    /// <inheritdoc />
    public override string Name => "fifo";

    /// <inheritdoc />
    public override string Description => "The seed's code as is: continuations in arrival order.";

    /// <inheritdoc />
    public override bool Supports(LeaseSimulation.Settings.BrokerKind broker) => true;

    /// <inheritdoc />
    public override void Run(ScenarioRun run)
    {
        ArgumentNullException.ThrowIfNull(run);
        if (run.Settings.Broker == LeaseSimulation.Settings.BrokerKind.ServiceBus)
        {
            using var serviceBus = ServiceBusScenarioQueue.Create(run);
            UnprioritisedHost.Run(run, new ServiceBusSeedConsumer(run, serviceBus).RunAsync);
            serviceBus.Reconcile();
            return;
        }

        using var broker = run.Settings.Broker == LeaseSimulation.Settings.BrokerKind.Postgres ? PostgresScenarioQueue.Create(run.Settings, Name) : null;
        var consumer = new SeedConsumer(run, new UnorderedContinuations(run.Clock.TimeProvider), broker?.Queue);
        UnprioritisedHost.Run(run, consumer.RunAsync);
    }
}
