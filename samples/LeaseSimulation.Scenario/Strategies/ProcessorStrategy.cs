using Azure.Messaging.ServiceBus;
using LeaseSimulation.Brokers.ServiceBus;
using LeaseSimulation.Hosting;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Strategies;

/// <summary>
/// The Azure SDK's own <see cref="ServiceBusProcessor"/> with auto lock renewal, consuming the seed's messages
/// (<c>--broker servicebus</c> only): <c>processor</c> with the SDK's defaults, <c>processor-guide</c> configured as the
/// SDK's troubleshooting guide advises. The processor runs its receive loop, lock renewal and handler invocations on
/// the thread pool. In the single-thread context each handler hands its work to the run's one thread (the FIFO
/// single-thread context, as a WinForms handler marshals to its UI thread) and awaits it there; the processor's own
/// renewals stay on the pool. On the thread pool and the starved pool the handler runs where the processor calls it.
/// </summary>
public sealed class ProcessorStrategy : ConsumerStrategy
{
    private readonly bool _followsGuide;

    /// <summary>Creates the strategy.</summary>
    /// <param name="followsGuide"><see langword="true"/> for the guide's settings (<c>processor-guide</c>), <see langword="false"/> for the defaults (<c>processor</c>).</param>
    public ProcessorStrategy(bool followsGuide) => _followsGuide = followsGuide;

    /// <inheritdoc />
    public override string Name => _followsGuide ? "processor-guide" : "processor";

    /// <inheritdoc />
    public override string Description => _followsGuide
        ? "ServiceBusProcessor as its troubleshooting guide advises: MaxConcurrentCalls = --threads, PrefetchCount 0, auto lock renewal for the whole run."
        : "ServiceBusProcessor with the SDK's defaults (MaxConcurrentCalls 1, PrefetchCount 0, auto lock renewal up to 5 minutes).";

    /// <inheritdoc />
    public override bool Supports(BrokerKind broker) => broker == BrokerKind.ServiceBus;

    /// <summary>
    /// Gets the processor's options for <paramref name="settings"/>. Both complete explicitly (AutoCompleteMessages off)
    /// so that the run sees whether each completion found its lock; otherwise the defaults are the SDK's, and the guide's
    /// advice sets a modest MaxConcurrentCalls (the run's thread count, the pump's worker count), PrefetchCount 0 and a
    /// MaxAutoLockRenewalDuration as long as the run's deadline (at least the default 5 minutes).
    /// </summary>
    /// <param name="settings">The run's settings.</param>
    /// <returns>The options.</returns>
    public ServiceBusProcessorOptions CreateOptions(SimulationSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        var options = new ServiceBusProcessorOptions { AutoCompleteMessages = false };
        if (_followsGuide)
        {
            options.MaxConcurrentCalls = settings.Threads;
            options.PrefetchCount = 0;
            var wholeRun = settings.EffectiveDeadline * settings.TimeScale;
            options.MaxAutoLockRenewalDuration = wholeRun > options.MaxAutoLockRenewalDuration ? wholeRun : options.MaxAutoLockRenewalDuration;
        }

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

    private async Task RunAsync(ScenarioRun run, ServiceBusScenarioQueue queue)
    {
        // Captured here, on the run's context: in the single-thread context, the handlers' work goes to its one thread.
        var handlerScheduler = run.Settings.Context.IsOneThread() ? TaskScheduler.FromCurrentSynchronizationContext() : TaskScheduler.Default;
        var processor = queue.Client.CreateProcessor(queue.QueueName, CreateOptions(run.Settings));
        try
        {
            processor.ProcessMessageAsync += args => Task.Factory.StartNew(
                () => HandleAsync(run, queue, args, args.CancellationToken),
                CancellationToken.None,
                TaskCreationOptions.DenyChildAttach,
                handlerScheduler).Unwrap();
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

    /// <summary>
    /// The processors' handler (<c>processor</c>, <c>processor-guide</c> and <c>processor-keeper</c>): records the
    /// delivery, runs the seed's processing until <paramref name="cancellationToken"/> stops it, then completes (or
    /// abandons) through <paramref name="args"/> and records how that ended.
    /// </summary>
    /// <param name="run">The run.</param>
    /// <param name="queue">The run's queue.</param>
    /// <param name="args">The processor's arguments.</param>
    /// <param name="cancellationToken">Stops the processing: the processor's token, or the keeper's lost-lease token with it.</param>
    /// <returns>A task that completes when the delivery is settled or given up.</returns>
    internal static async Task HandleAsync(ScenarioRun run, ServiceBusScenarioQueue queue, ProcessMessageEventArgs args, CancellationToken cancellationToken)
    {
        var received = args.Message;
        var ledger = queue.Ledger;
        var message = ledger.OnDelivered(received.MessageId, received.DeliveryCount);
        ledger.OnHandlerStarted(received.MessageId);
        var processed = await SeedHandler.ProcessAsync(run, message, run.Clock.TimeProvider, cancellationToken);
        try
        {
            if (processed)
            {
                await args.CompleteMessageAsync(received, CancellationToken.None);
                ledger.OnSettled(received.MessageId, received.DeliveryCount, DeliveryOutcome.Completed);
            }
            else
            {
                await args.AbandonMessageAsync(received, cancellationToken: CancellationToken.None);
                ledger.OnSettled(received.MessageId, received.DeliveryCount, DeliveryOutcome.Abandoned);
            }
        }
        catch (ServiceBusException ex) when (ex.Reason == ServiceBusFailureReason.MessageLockLost)
        {
            ledger.OnSettled(received.MessageId, received.DeliveryCount, DeliveryOutcome.LockLost);
        }
        catch (Exception ex) when (ex is ServiceBusException { IsTransient: true } or ObjectDisposedException)
        {
            // Not settled: the lock runs out and the broker redelivers; the ledger sees that at the redelivery.
        }
    }
}
