using LeaseSimulation.Brokers.ServiceBus;
using LeaseSimulation.Hosting;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Strategies;

/// <summary>
/// <c>receiver-keeper</c> (<c>--broker servicebus</c> only): the seed's naive consumer on a
/// <c>ServiceBusReceiver</c> (<c>fifo</c>'s loop, run where <c>fifo</c> runs it), with a <c>LeaseKeeper</c> on a
/// <c>PriorityTaskScheduler</c>'s reserved lease worker keeping each message instead of the seed's own keeper loop.
/// </summary>
public sealed class ReceiverKeeperStrategy : ConsumerStrategy
{
    /// <inheritdoc />
    public override string Name => "receiver-keeper";

    /// <inheritdoc />
    public override string Description => "The seed's naive ServiceBusReceiver loop with a LeaseKeeper keeping each message instead of its own renewal loop.";

    /// <inheritdoc />
    public override bool Supports(BrokerKind broker) => broker == BrokerKind.ServiceBus;

    /// <inheritdoc />
    public override void Run(ScenarioRun run)
    {
        ArgumentNullException.ThrowIfNull(run);
        using var queue = ServiceBusScenarioQueue.Create(run);
        using var keeperScheduler = KeeperHost.CreateScheduler();
        var keeper = KeeperHost.CreateKeeper(run, keeperScheduler);
        try
        {
            UnprioritisedHost.Run(run, new ServiceBusSeedConsumer(run, queue, keeper).RunAsync);
        }
        finally
        {
            keeper.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }

        queue.Reconcile();
    }
}
