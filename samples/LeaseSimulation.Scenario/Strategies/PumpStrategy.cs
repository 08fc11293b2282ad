using LeaseSimulation.Brokers;
using LeaseSimulation.Brokers.ServiceBus;
using LeaseSimulation.Consumers;
using LeaseSimulation.Consumers.Pump;
using LeaseSimulation.Hosting;
using LeaseSimulation.Messages;
using LeaseSimulation.Running;
using PriorityAsync;
using PriorityAsync.MessagePump;

namespace LeaseSimulation.Strategies;

/// <summary>
/// PriorityAsync's <see cref="PriorityMessagePump"/> on the in-memory lease broker (or, with <c>--broker postgres</c>, on the
/// PostgreSQL transport, or with <c>--broker servicebus</c> on the Service Bus transport), with the seed's processor loop as its handler. The broker's lock is the lease duration; the
/// pump renews it one renew interval after each renewal.
/// </summary>
public sealed class PumpStrategy : ConsumerStrategy
{
    /// <inheritdoc />
    public override string Name => "pump";

    /// <inheritdoc />
    public override string Description => "MessagePump on the in-memory lease broker (or PostgreSQL) with the seed's processing loop as handler.";

    /// <inheritdoc />
    public override int? MaxCpuThreads(LeaseSimulation.Settings.SimulationSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return settings.Threads; // the PriorityTaskScheduler's dedicated workers (PriorityHost)
    }

    /// <inheritdoc />
    public override bool UsesInMemoryBroker(LeaseSimulation.Settings.SimulationSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return settings.Broker == LeaseSimulation.Settings.BrokerKind.Memory;
    }

    /// <inheritdoc />
    public override bool Supports(LeaseSimulation.Settings.BrokerKind broker) => true;

    /// <inheritdoc />
    public override void Run(ScenarioRun run)
    {
        ArgumentNullException.ThrowIfNull(run);
        if (run.Settings.Broker == LeaseSimulation.Settings.BrokerKind.ServiceBus)
        {
            using var serviceBus = ServiceBusScenarioQueue.Create(run);
            PriorityHost.Run(run, scheduler => ServiceBusPumpConsumer.RunAsync(run, scheduler, serviceBus));
            serviceBus.Reconcile();
            return;
        }

        if (run.Settings.Broker == LeaseSimulation.Settings.BrokerKind.Postgres)
        {
            using var postgres = PostgresScenarioQueue.Create(run.Settings, Name);
            PriorityHost.Run(run, scheduler => RunPumpAsync(run, scheduler, postgres.Queue));
            return;
        }

        PriorityHost.Run(run, scheduler => RunOnInMemoryBrokerAsync(run, scheduler));
    }

    /// <summary>
    /// Runs the pump in <paramref name="scheduler"/>'s lanes on the in-memory lease broker until every message is
    /// finished (the CLI's run, and the WinForms window's on its UI thread).
    /// </summary>
    /// <param name="run">The run.</param>
    /// <param name="scheduler">The scheduler the pump's receive loop, renewals and handlers run in.</param>
    /// <returns>A task that completes when the pump has stopped.</returns>
    public static async Task RunOnInMemoryBrokerAsync(ScenarioRun run, PriorityScheduler scheduler)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(scheduler);

        // The broker is another machine: on the real clock its calls complete on a thread of its own, so neither the
        // consumer's lanes nor a starved thread pool delay the broker's side of a call (the lock check, the renewal).
        var brokerThread = run.Settings.Clock == LeaseSimulation.Settings.ClockKind.Real
            ? new PriorityAsyncContextThread(new PrioritySchedulerOptions { Name = "in-memory broker" })
            : null;
        await using (brokerThread)
        {
            var brokerClock = brokerThread?.Context.TimeProvider ?? run.Clock.TimeProvider;
            await RunPumpAsync(run, scheduler, CreateInMemoryQueue(run, brokerClock));
        }
    }

    private static InMemoryQueue CreateInMemoryQueue(ScenarioRun run, TimeProvider brokerClock)
    {
        var settings = run.Settings;
        var scale = settings.Clock == LeaseSimulation.Settings.ClockKind.Virtual ? 1.0 : settings.TimeScale;

        // The broker keeps its own time: the consumer's scheduler's TimeProvider would run its latency timers in a lane, so
        // the broker's side of a call (the lock check, the renewal) would wait behind the consumer's CPU slices. On virtual
        // time the clock itself fires them; on the real clock the broker's own thread does.
        var broker = new InMemoryTransport(brokerClock);
        var queue = broker.CreateQueue("seed-001", new InMemoryQueueOptions
        {
            LockDuration = settings.LeaseDuration * scale,
            MaxDeliveryCount = 1, // a lost lease loses the message, as in the seed (no redelivery)
            Latency = settings.BrokerLatency * scale, // on every receive, renew and settle call (--broker-latency)
        });
        for (var i = 1; i <= settings.Messages; i++)
        {
            queue.Send(BitConverter.GetBytes(i), i.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }

        return queue;
    }

    private static async Task RunPumpAsync(ScenarioRun run, PriorityScheduler scheduler, IMessageSource queue)
    {
        var settings = run.Settings;
        var scale = settings.Clock == LeaseSimulation.Settings.ClockKind.Virtual ? 1.0 : settings.TimeScale;
        var pump = new PriorityMessagePump(
            new TrackedMessageSource(queue, run, scheduler.TimeProvider),
            (context, cancellationToken) => ProcessAsync(run, context, cancellationToken),
            scheduler,
            new MessagePumpOptions
            {
                Name = "lease-simulation",
                LeaseKeeper = new() { LockRenewalBuffer = (settings.LeaseDuration - settings.RenewInterval) * scale },
                EmptyReceiveDelay = settings.RenewInterval * scale,
                ShutdownTimeout = TimeSpan.Zero,
            });
        await using (pump)
        {
            await pump.StartAsync();
            while (run.Queue.HasMessages || run.Tracker.Snapshot().InFlight > 0)
            {
                await run.Clock.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
            }

            await pump.StopAsync();
        }
    }

    /// <summary>The seed's processor loop as a pump handler: L × (CPU operation, awaited IO).</summary>
    private static async Task ProcessAsync(ScenarioRun run, MessageContext context, CancellationToken cancellationToken)
    {
        var settings = run.Settings;
        var message = ((ReportingLeasedMessage)context.Message).Simulated;
        var random = ScenarioRandom.ForMessage(settings.Seed, message.Id);
        for (var loop = 0; loop < settings.Loops; loop++)
        {
            if (cancellationToken.IsCancellationRequested || message.IsFinished)
            {
                return;
            }

            run.Clock.HoldThread(settings.CpuTime);
            try
            {
                await run.Clock.Delay(ScenarioRandom.Jitter(settings.IoTime, settings.IoJitter, random), context.TimeProvider, cancellationToken);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                return;
            }
        }
    }
}
