using System.Globalization;
using PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>
/// An in-process Service Bus test broker: an AMQP 1.0 listener on a loopback port that speaks the part of the Service
/// Bus dialect the Azure.Messaging.ServiceBus 7.x client uses. Point a <c>ServiceBusClient</c> at
/// <see cref="ConnectionString"/>; create entities with <see cref="CreateQueue"/> and <see cref="CreateTopic"/>.
/// Locks are judged on <see cref="TimeProvider"/>, so a fake clock expires them deterministically.
/// </summary>
public sealed partial class ServiceBusTestBroker : IAsyncDisposable
{
    private readonly Dictionary<string, ServiceBusTestQueue> _queues = new(StringComparer.OrdinalIgnoreCase);
    private readonly Dictionary<string, ServiceBusTestTopic> _topics = new(StringComparer.OrdinalIgnoreCase);
    private readonly List<SessionWaiter> _sessionWaiters = [];
    private readonly ITimer _timer;
    private readonly string _keyName;
    private readonly string _key;
    private AmqpHost? _host;
    private long _sequenceNumber;
    private bool _disposed;

    private ServiceBusTestBroker(ServiceBusTestBrokerOptions options)
    {
        TimeProvider = options.TimeProvider;
        _keyName = options.KeyName;
        MaxMessageSize = (ulong)options.MaxMessageSizeInBytes;
        _key = options.Key;
        Faults = new ServiceBusTestFaults(this);
        _timer = TimeProvider.CreateTimer(static state => ((ServiceBusTestBroker)state!).OnTimer(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    /// <summary>The connection string for <c>ServiceBusClient</c>: <c>Endpoint=sb://127.0.0.1:{Port};SharedAccessKeyName=…;SharedAccessKey=…;UseDevelopmentEmulator=true</c>.</summary>
    public string ConnectionString =>
        string.Create(CultureInfo.InvariantCulture, $"Endpoint=sb://127.0.0.1:{Port};SharedAccessKeyName={_keyName};SharedAccessKey={_key};UseDevelopmentEmulator=true");

    /// <summary>The loopback port the broker listens on (kept across <see cref="StopAsync"/> and <see cref="RestartAsync"/>).</summary>
    public int Port { get; private set; }

    /// <summary>The clock on which lock expiry, renewals and enqueued times are judged.</summary>
    public TimeProvider TimeProvider { get; }

    /// <summary>Faults injected on demand.</summary>
    public ServiceBusTestFaults Faults { get; }

    /// <summary>True while the broker listens (between start or restart and stop).</summary>
    public bool IsListening
    {
        get
        {
            lock (Sync)
            {
                return _host is not null;
            }
        }
    }

    internal object Sync { get; } = new();

    /// <summary>The max-message-size of the broker's end of send links (<see cref="ServiceBusTestBrokerOptions.MaxMessageSizeInBytes"/>).</summary>
    internal ulong MaxMessageSize { get; }

    /// <summary>Starts a broker listening on a loopback port.</summary>
    /// <param name="options">Clock, port and key; defaults when null.</param>
    /// <param name="cancellationToken">Cancels the start.</param>
    /// <returns>The started broker; dispose it to stop listening.</returns>
    /// <exception cref="ArgumentNullException"><see cref="ServiceBusTestBrokerOptions.TimeProvider"/>, the key name or the key is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The port is outside 0..65535.</exception>
    /// <exception cref="ArgumentException">The key name or the key is empty.</exception>
    public static Task<ServiceBusTestBroker> StartAsync(ServiceBusTestBrokerOptions? options = null, CancellationToken cancellationToken = default)
    {
        options ??= new ServiceBusTestBrokerOptions();
        if (options.TimeProvider is null)
        {
            throw new ArgumentNullException(nameof(options), "options.TimeProvider must not be null.");
        }

        if (options.Port is < 0 or > 65535)
        {
            throw new ArgumentOutOfRangeException(nameof(options), options.Port, "options.Port must be 0 (any free port) or a port in 1..65535.");
        }

        if (options.MaxMessageSizeInBytes is < 1 or > ServiceBusTestBrokerOptions.PremiumMaxMessageSizeInBytes)
        {
            throw new ArgumentOutOfRangeException(nameof(options), options.MaxMessageSizeInBytes, "options.MaxMessageSizeInBytes must be in 1..104857600 (100 MB, the Premium tier's limit).");
        }

        if (string.IsNullOrWhiteSpace(options.KeyName) || string.IsNullOrWhiteSpace(options.Key))
        {
            throw new ArgumentException("options.KeyName and options.Key must not be empty.", nameof(options));
        }
        cancellationToken.ThrowIfCancellationRequested();
        var broker = new ServiceBusTestBroker(options);
        broker.Listen(options.Port);
        return Task.FromResult(broker);
    }

    /// <summary>Creates a queue.</summary>
    /// <param name="name">The queue name (the entity path).</param>
    /// <param name="options">Lock duration, max delivery count and sessions; defaults when null.</param>
    /// <returns>The queue.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, not a valid entity name, or taken.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An option is out of range.</exception>
    public ServiceBusTestQueue CreateQueue(string name, ServiceBusTestEntityOptions? options = null)
    {
        ValidateEntityName(name, nameof(name));
        return AddQueue(name, options, nameof(name));
    }

    /// <summary>Creates a topic; add subscriptions with <see cref="ServiceBusTestTopic.CreateSubscription"/>.</summary>
    /// <param name="name">The topic name.</param>
    /// <returns>The topic.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty, not a valid entity name, or taken.</exception>
    public ServiceBusTestTopic CreateTopic(string name)
    {
        ValidateEntityName(name, nameof(name));
        lock (Sync)
        {
            ThrowIfTaken(name, nameof(name));
            var topic = new ServiceBusTestTopic(this, name);
            _topics.Add(name, topic);
            return topic;
        }
    }

    /// <summary>Gets a queue, a subscription (<c>topic/Subscriptions/sub</c>) or a dead-letter sub-queue (<c>…/$DeadLetterQueue</c>) by path.</summary>
    /// <param name="path">The entity path (case-insensitive).</param>
    /// <returns>The entity.</returns>
    /// <exception cref="ArgumentException">No such entity.</exception>
    public ServiceBusTestQueue GetQueue(string path)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(path);
        return FindQueue(path) ?? throw new ArgumentException($"The broker has no queue, subscription or dead-letter sub-queue at '{path}'.", nameof(path));
    }

    /// <summary>
    /// The broker goes away: the listener stops and every connection is closed. Entity state is kept: messages
    /// locked at that moment come back when their locks expire, sessions are released.
    /// </summary>
    /// <param name="cancellationToken">Not used; the stop is immediate.</param>
    /// <returns>A completed task.</returns>
    public Task StopAsync(CancellationToken cancellationToken = default)
    {
        AmqpHost? host;
        lock (Sync)
        {
            host = _host;
            _host = null;
        }

        host?.Stop();
        return Task.CompletedTask;
    }

    /// <summary>Listens again on the same <see cref="Port"/> (stopping first if still listening).</summary>
    /// <param name="cancellationToken">Cancels the restart.</param>
    /// <returns>A completed task.</returns>
    /// <exception cref="ObjectDisposedException">The broker was disposed.</exception>
    public async Task RestartAsync(CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        await StopAsync(cancellationToken).ConfigureAwait(false);
        cancellationToken.ThrowIfCancellationRequested();
        Listen(Port);
    }

    /// <summary>Stops listening and releases the clock's timer.</summary>
    /// <returns>A task that completes when stopped.</returns>
    public async ValueTask DisposeAsync()
    {
        _disposed = true;
        await StopAsync().ConfigureAwait(false);
        await _timer.DisposeAsync().ConfigureAwait(false);
    }

    internal static string SubscriptionPath(string topic, string subscription) => topic + "/Subscriptions/" + subscription;

    internal Task DropConnectionsAsync() => Host()?.DropConnectionsAsync() ?? Task.CompletedTask;

    internal Task DetachConsumersAsync(string? entityPath) => Host()?.DetachConsumersAsync(entityPath) ?? Task.CompletedTask;

    internal Task DetachConsumersAsync(string entityPath, Microsoft.Azure.Amqp.Encoding.AmqpSymbol condition, string description) =>
        Host()?.DetachConsumersAsync(entityPath, condition, description) ?? Task.CompletedTask;

    private AmqpHost? Host()
    {
        lock (Sync)
        {
            return _host;
        }
    }

    private void Listen(int port)
    {
        var host = new AmqpHost(this, port);
        lock (Sync)
        {
            _host = host;
            Port = host.Port;
        }
    }
}
