using System.Globalization;
using Azure.Messaging.ServiceBus;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;

namespace LeaseSimulation.Brokers.ServiceBus;

/// <summary>
/// The Service Bus queue of one run (<c>--broker servicebus</c>): by default a queue on an in-process
/// <see cref="ServiceBusTestBroker"/> started for the run (the real Azure.Messaging.ServiceBus client talks AMQP to it
/// over loopback); with <c>--connection</c>, the existing queue named by the connection string's <c>EntityPath</c>. The
/// queue holds the run's messages "1" to "N", its lock is the lease duration scaled to wall time, and as on Service Bus
/// a message whose lock is lost is redelivered, up to <see cref="MaxDeliveryCount"/> deliveries, then dead-lettered.
/// </summary>
public sealed class ServiceBusScenarioQueue : IDisposable
{
    /// <summary>The max delivery count of the run's queue: Service Bus's default.</summary>
    public const int MaxDeliveryCount = 10;

    private const string TestQueueName = "seed-001";

    private readonly ServiceBusTestBroker? _broker;
    private readonly int _messages;

    private ServiceBusScenarioQueue(ScenarioRun run, ServiceBusClient client, string queueName, ServiceBusTestBroker? broker, ServiceBusTestQueue? testQueue)
    {
        Client = client;
        QueueName = queueName;
        _broker = broker;
        TestQueue = testQueue;
        _messages = run.Settings.Messages;
        LockDuration = run.Settings.LeaseDuration * run.Settings.TimeScale;
        Ledger = new ServiceBusLedger(run, MaxDeliveryCount);
        run.ServiceBusLedger = Ledger;
    }

    /// <summary>Gets the client (owned by this queue).</summary>
    public ServiceBusClient Client { get; }

    /// <summary>Gets the queue's name.</summary>
    public string QueueName { get; }

    /// <summary>Gets the queue on the in-process test broker, or <see langword="null"/> with <c>--connection</c>.</summary>
    public ServiceBusTestQueue? TestQueue { get; }

    /// <summary>Gets the queue's lock duration: the lease duration scaled to wall time.</summary>
    public TimeSpan LockDuration { get; }

    /// <summary>Gets what happened to the run's messages.</summary>
    public ServiceBusLedger Ledger { get; }

    /// <summary>
    /// Gets whether every message has been completed or dead-lettered. On the test broker the broker says so (nothing
    /// locked, then nothing active: a lock that expires between the two reads is counted as locked, not missed);
    /// elsewhere the ledger does.
    /// </summary>
    public bool IsDrained => TestQueue is { } queue ? queue.LockedCount == 0 && queue.ActiveCount == 0 : Ledger.AllSettled;

    /// <summary>Starts the broker (or connects), creates the queue and sends the run's messages. Blocks (called before the host starts).</summary>
    /// <param name="run">The run; its broker must be <see cref="BrokerKind.ServiceBus"/>.</param>
    /// <returns>The queue.</returns>
    /// <exception cref="ArgumentException">The connection string names no queue (<c>EntityPath</c>).</exception>
    public static ServiceBusScenarioQueue Create(ScenarioRun run)
    {
        ArgumentNullException.ThrowIfNull(run);
        var settings = run.Settings;
        if (settings.Broker != BrokerKind.ServiceBus)
        {
            throw new ArgumentException($"The run's broker is {settings.Broker}, not ServiceBus.", nameof(run));
        }

        if (settings.BrokerConnection is { } connection)
        {
            var entity = ServiceBusConnectionStringProperties.Parse(connection).EntityPath;
            if (string.IsNullOrWhiteSpace(entity))
            {
                throw new ArgumentException("The Service Bus connection string must name the run's queue with EntityPath=<queue> (an existing, empty queue whose lock duration is the scaled lease).", nameof(run));
            }

            var remote = new ServiceBusClient(connection);
            return Fill(new ServiceBusScenarioQueue(run, remote, entity, null, null));
        }

        var broker = ServiceBusTestBroker.StartAsync().GetAwaiter().GetResult();
        try
        {
            var queue = broker.CreateQueue(TestQueueName, new ServiceBusTestEntityOptions
            {
                LockDuration = settings.LeaseDuration * settings.TimeScale,
                MaxDeliveryCount = MaxDeliveryCount,
            });
            return Fill(new ServiceBusScenarioQueue(run, new ServiceBusClient(broker.ConnectionString), TestQueueName, broker, queue));
        }
        catch
        {
            broker.DisposeAsync().AsTask().GetAwaiter().GetResult();
            throw;
        }
    }

    /// <summary>Creates a receiver on the queue in peek-lock mode without prefetch.</summary>
    /// <returns>The receiver.</returns>
    public ServiceBusReceiver CreateReceiver() =>
        Client.CreateReceiver(QueueName, new ServiceBusReceiverOptions { ReceiveMode = ServiceBusReceiveMode.PeekLock, PrefetchCount = 0 });

    /// <summary>
    /// Ends the run on the test broker: every dead letter of the queue counts as dead-lettered in the ledger (whether
    /// or not its consumer saw its last lock go), and the broker's counts are kept in <see cref="ServiceBusLedger.BrokerAudit"/>.
    /// Does nothing with <c>--connection</c>.
    /// </summary>
    public void Reconcile()
    {
        if (TestQueue is not { } queue)
        {
            return;
        }

        var deadLetters = queue.DeadLetters;
        foreach (var deadLetter in deadLetters)
        {
            Ledger.OnSettled(deadLetter.MessageId, deadLetter.DeliveryCount, DeliveryOutcome.LockLost);
        }

        var locked = queue.LockedCount;
        Ledger.BrokerAudit = new ServiceBusBrokerAudit(
            [.. Enumerable.Range(1, _messages).Select(i => queue.CompletionsOf(i.ToString(CultureInfo.InvariantCulture)))],
            [.. deadLetters.Select(d => d.MessageId)],
            locked,
            queue.ActiveCount,
            queue.RenewCount);
    }

    /// <summary>Closes the client and stops the test broker.</summary>
    public void Dispose()
    {
        try
        {
            Client.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
        finally
        {
            _broker?.DisposeAsync().AsTask().GetAwaiter().GetResult();
        }
    }

    private static ServiceBusScenarioQueue Fill(ServiceBusScenarioQueue queue)
    {
        try
        {
            var messages = Enumerable.Range(1, queue._messages).ToList();
            if (queue.TestQueue is { } testQueue)
            {
                foreach (var i in messages)
                {
                    testQueue.Send(BitConverter.GetBytes(i), i.ToString(CultureInfo.InvariantCulture));
                }

                return queue;
            }

            var sender = queue.Client.CreateSender(queue.QueueName);
            try
            {
                foreach (var chunk in messages.Chunk(100))
                {
                    sender.SendMessagesAsync(chunk.Select(i => new ServiceBusMessage(BitConverter.GetBytes(i)) { MessageId = i.ToString(CultureInfo.InvariantCulture) })).GetAwaiter().GetResult();
                }
            }
            finally
            {
                sender.DisposeAsync().AsTask().GetAwaiter().GetResult();
            }

            return queue;
        }
        catch
        {
            queue.Dispose();
            throw;
        }
    }
}
