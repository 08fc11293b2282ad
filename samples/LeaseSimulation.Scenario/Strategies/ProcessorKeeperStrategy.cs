using Azure.Messaging.ServiceBus;
using LeaseSimulation.Brokers.ServiceBus;
using LeaseSimulation.Hosting;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using PriorityAsync;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.AzureServiceBus;

namespace LeaseSimulation.Strategies;

/// <summary>
/// <c>processor-keeper</c> (<c>--broker servicebus</c> only): the SDK's <see cref="ServiceBusProcessor"/> with its
/// defaults, its own lock renewal off (<see cref="ServiceBusProcessorOptions.MaxAutoLockRenewalDuration"/> zero), and a
/// <see cref="LeaseKeeper"/> on a <see cref="PriorityTaskScheduler"/>'s reserved lease worker keeping each message from
/// the handler's first line (<c>using var lease = keeper.Keep(args, processor);</c>) to its end. The handler is
/// <c>processor</c>'s, run where <c>processor</c> runs it, stopped by the lease's lost-lock token too.
/// </summary>
public sealed class ProcessorKeeperStrategy : ConsumerStrategy
{
    private static readonly ProcessorStrategy Defaults = new(followsGuide: false);

    /// <inheritdoc />
    public override string Name => "processor-keeper";

    /// <inheritdoc />
    public override string Description => "ServiceBusProcessor with the SDK's defaults, its own lock renewal off, and a LeaseKeeper keeping each message in the handler.";

    /// <inheritdoc />
    public override bool Supports(BrokerKind broker) => broker == BrokerKind.ServiceBus;

    /// <summary>Gets the processor's options: <c>processor</c>'s (the SDK's defaults, explicit completion) with its own lock renewal off.</summary>
    /// <param name="settings">The run's settings.</param>
    /// <returns>The options.</returns>
    public static ServiceBusProcessorOptions CreateOptions(SimulationSettings settings)
    {
        var options = Defaults.CreateOptions(settings);
        options.MaxAutoLockRenewalDuration = TimeSpan.Zero; // the keeper renews
        return options;
    }

    /// <inheritdoc />
    public override int? MaxCpuThreads(SimulationSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return CreateOptions(settings).MaxConcurrentCalls;
    }

    /// <inheritdoc />
    public override void Run(ScenarioRun run)
    {
        ArgumentNullException.ThrowIfNull(run);
        using var queue = ServiceBusScenarioQueue.Create(run);
        UnprioritisedHost.Run(run, () => RunAsync(run, queue));
        queue.Reconcile();
    }

    private static async Task RunAsync(ScenarioRun run, ServiceBusScenarioQueue queue)
    {
        // Captured here, on the run's context: in the single-thread context, the handlers' work goes to its one thread.
        var handlerScheduler = run.Settings.Context.IsOneThread() ? TaskScheduler.FromCurrentSynchronizationContext() : TaskScheduler.Default;
        using var keeperScheduler = KeeperHost.CreateScheduler();
        await using var keeper = KeeperHost.CreateKeeper(run, keeperScheduler);
        var processor = queue.Client.CreateProcessor(queue.QueueName, CreateOptions(run.Settings));
        try
        {
            processor.ProcessMessageAsync += async args =>
            {
                using var lease = keeper.Keep(args, processor);
                if (lease.IsLost)
                {
                    // The lock ran out before the handler was called (the message waited for a starved pool): the keeper
                    // counted and reported it, and the handler does not run it as if it were held.
                    queue.Ledger.OnDelivered(args.Message.MessageId, args.Message.DeliveryCount);
                    queue.Ledger.OnSettled(args.Message.MessageId, args.Message.DeliveryCount, DeliveryOutcome.LockLost);
                    return;
                }

                using var stop = CancellationTokenSource.CreateLinkedTokenSource(args.CancellationToken, lease.LeaseLostToken);
                await Task.Factory.StartNew(
                    () => ProcessorStrategy.HandleAsync(run, queue, args, stop.Token),
                    CancellationToken.None,
                    TaskCreationOptions.DenyChildAttach,
                    handlerScheduler).Unwrap();
            };
            processor.ProcessErrorAsync += _ => Task.CompletedTask; // lost locks are counted from the settlements and redeliveries
            await processor.StartProcessingAsync();
            while (!queue.IsDrained && !run.ReachedDeadline)
            {
                await run.Clock.Delay(TimeSpan.FromSeconds(1), run.Clock.TimeProvider);
            }

            await processor.StopProcessingAsync();
        }
        finally
        {
            await processor.DisposeAsync();
        }
    }
}
