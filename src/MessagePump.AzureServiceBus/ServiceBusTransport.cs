using Azure.Core;
using Azure.Messaging.ServiceBus;
using Azure.Messaging.ServiceBus.Administration;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// A Service Bus namespace for message pumps: one <see cref="ServiceBusClient"/> (one AMQP connection) from which
/// sources for queues, topic subscriptions and sessions are opened. Create it once per process, open sources with it,
/// and dispose it last. Thread-safe.
/// </summary>
/// <remarks>See <c>docs/azure-service-bus.md</c>.</remarks>
public sealed partial class ServiceBusTransport : IAsyncDisposable
{
    private readonly ServiceBusClient _client;
    private readonly bool _ownsClient;
    private readonly ServiceBusAdministrationClient? _admin;
    private readonly ServiceBusTransportOptions _options;

    /// <summary>Creates a transport from a connection string (a namespace's shared access key, or the emulator's).</summary>
    /// <param name="connectionString">A Service Bus connection string: <c>Endpoint=sb://NAMESPACE.servicebus.windows.net/;SharedAccessKeyName=...;SharedAccessKey=...</c>.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied here.</param>
    /// <exception cref="ArgumentException"><paramref name="connectionString"/> is empty or malformed, or names no endpoint.</exception>
    public ServiceBusTransport(string connectionString, ServiceBusTransportOptions? options = null)
    {
        ValidateConnectionString(connectionString);
        _options = (options ?? new ServiceBusTransportOptions()).Clone();
        _client = new ServiceBusClient(connectionString, _options.ClientOptions ?? new ServiceBusClientOptions());
        _ownsClient = true;
        _admin = _options.ReadEntityProperties ? new ServiceBusAdministrationClient(connectionString, AdminOptions()) : null;
    }

    /// <summary>Creates a transport for a namespace reached with a token credential (for example <c>DefaultAzureCredential</c>).</summary>
    /// <param name="fullyQualifiedNamespace">The namespace's host name: <c>NAMESPACE.servicebus.windows.net</c>.</param>
    /// <param name="credential">The credential; it needs the Listen right (the 'Azure Service Bus Data Receiver' role), and Manage to read lock durations.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied here.</param>
    /// <exception cref="ArgumentException"><paramref name="fullyQualifiedNamespace"/> is empty or not a host name.</exception>
    /// <exception cref="ArgumentNullException"><paramref name="credential"/> is null.</exception>
    public ServiceBusTransport(string fullyQualifiedNamespace, TokenCredential credential, ServiceBusTransportOptions? options = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(fullyQualifiedNamespace);
        ArgumentNullException.ThrowIfNull(credential);
        if (Uri.CheckHostName(fullyQualifiedNamespace) == UriHostNameType.Unknown)
        {
            throw new ArgumentException($"'{fullyQualifiedNamespace}' is not a host name: pass the namespace's fully qualified name, e.g. NAMESPACE.servicebus.windows.net (no scheme, no path).", nameof(fullyQualifiedNamespace));
        }

        _options = (options ?? new ServiceBusTransportOptions()).Clone();
        _client = new ServiceBusClient(fullyQualifiedNamespace, credential, _options.ClientOptions ?? new ServiceBusClientOptions());
        _ownsClient = true;
        _admin = _options.ReadEntityProperties ? new ServiceBusAdministrationClient(fullyQualifiedNamespace, credential, AdminOptions()) : null;
    }

    /// <summary>Creates a transport on a client the caller owns (and disposes after the transport). It cannot read entity properties.</summary>
    /// <param name="client">The client.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied here.</param>
    /// <exception cref="ArgumentNullException"><paramref name="client"/> is null.</exception>
    public ServiceBusTransport(ServiceBusClient client, ServiceBusTransportOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(client);
        _options = (options ?? new ServiceBusTransportOptions()).Clone();
        _client = client;
        _ownsClient = false;
    }

    /// <summary>Gets the client the transport receives with.</summary>
    public ServiceBusClient Client => _client;

    /// <summary>
    /// Opens a peek-lock source on a queue or a subscription. Reads the entity's lock duration and session setting
    /// when <see cref="ServiceBusTransportOptions.ReadEntityProperties"/> is on and the credentials allow; otherwise
    /// uses <see cref="ServiceBusSourceOptions.LockDuration"/>.
    /// </summary>
    /// <param name="entity">The queue or subscription.</param>
    /// <param name="options">The source's options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The source; dispose it before the transport.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="entity"/> is null.</exception>
    /// <exception cref="ArgumentException">The entity does not exist, requires sessions (unless <see cref="ServiceBusSourceOptions.SubQueue"/> names its dead-letter sub-queue), or has another lock duration than the option; or an option breaks its rule.</exception>
    public async Task<ServiceBusMessageSource> OpenAsync(ServiceBusEntity entity, ServiceBusSourceOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(entity);
        options = (options ?? new ServiceBusSourceOptions()).Clone();
        options.Validate();
        ObjectDisposedException.ThrowIf(_client.IsClosed, this);
        var properties = await ReadPropertiesAsync(entity, cancellationToken).ConfigureAwait(false);
        if (properties is { RequiresSession: true } && options.SubQueue == SubQueue.None) // a sub-queue has no sessions
        {
            throw new ArgumentException($"The {entity} requires sessions: accept a session with AcceptNextSessionAsync or AcceptSessionAsync.", nameof(entity));
        }

        var lockDuration = ResolveLockDuration(entity, properties, options);
        return new ServiceBusMessageSource(CreateReceiver(entity, options), entity, lockDuration, options, ownsReceiver: true);
    }

    /// <summary>
    /// Opens a source without waiting (for a host's source factory, which is synchronous): the entity's properties are
    /// not read (the administration client has no synchronous calls), so the lock duration is the option's, checked
    /// against the locks of the first receive; <paramref name="maxConcurrentSessions"/> &gt; 0 opens sessions.
    /// </summary>
    internal IMessageSource Open(ServiceBusEntity entity, int maxConcurrentSessions, ServiceBusSourceOptions options)
    {
        options = options.Clone();
        options.Validate();
        if (maxConcurrentSessions > 0)
        {
            options.ThrowIfSubQueue(nameof(options));
        }

        return maxConcurrentSessions > 0
            ? new ServiceBusMultiSessionSource(this, entity, maxConcurrentSessions, options.LockDuration, options)
            : new ServiceBusMessageSource(CreateReceiver(entity, options), entity, options.LockDuration, options, ownsReceiver: true);
    }

    /// <summary>Closes the client when the transport created it.</summary>
    /// <returns>A task that completes when the client is closed.</returns>
    public async ValueTask DisposeAsync()
    {
        if (_ownsClient)
        {
            await _client.DisposeAsync().ConfigureAwait(false);
        }
    }

    /// <inheritdoc />
    public override string ToString() => $"ServiceBusTransport '{_client.FullyQualifiedNamespace}'";

    /// <summary>Throws when <paramref name="connectionString"/> is empty, malformed, or names no endpoint.</summary>
    internal static void ValidateConnectionString(string connectionString)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(connectionString);
        ServiceBusConnectionStringProperties properties;
        try
        {
            properties = ServiceBusConnectionStringProperties.Parse(connectionString);
        }
        catch (Exception ex) when (ex is FormatException or ArgumentException)
        {
            throw new ArgumentException($"The Service Bus connection string is malformed: {ex.Message}", nameof(connectionString), ex);
        }

        if (properties.Endpoint is null)
        {
            throw new ArgumentException("The Service Bus connection string names no Endpoint (Endpoint=sb://NAMESPACE.servicebus.windows.net/;...).", nameof(connectionString));
        }
    }

    private ServiceBusReceiver CreateReceiver(ServiceBusEntity entity, ServiceBusSourceOptions options)
    {
        var receiverOptions = new ServiceBusReceiverOptions { ReceiveMode = ServiceBusReceiveMode.PeekLock, PrefetchCount = options.PrefetchCount, SubQueue = options.SubQueue };
        return entity.SubscriptionName is { } subscription
            ? _client.CreateReceiver(entity.QueueOrTopicName, subscription, receiverOptions)
            : _client.CreateReceiver(entity.QueueOrTopicName, receiverOptions);
    }

    private static ServiceBusAdministrationClientOptions AdminOptions()
    {
        // Reading the lock duration is a convenience with a fallback: one attempt, bounded, so a namespace that does
        // not answer management requests costs seconds, not the SDK's default retries.
        var options = new ServiceBusAdministrationClientOptions();
        options.Retry.MaxRetries = 0;
        options.Retry.NetworkTimeout = TimeSpan.FromSeconds(10);
        return options;
    }

    private async Task<EntityProperties?> ReadPropertiesAsync(ServiceBusEntity entity, CancellationToken cancellationToken) =>
        _admin is null ? null : await EntityProperties.ReadAsync(_admin, entity, nameof(entity), cancellationToken).ConfigureAwait(false);

    private static TimeSpan? ResolveLockDuration(ServiceBusEntity entity, EntityProperties? properties, ServiceBusSourceOptions options)
    {
        if (properties is { } read && options.LockDuration is { } given && (read.LockDuration - given).Duration() > options.LockDurationTolerance)
        {
            throw new ArgumentException($"ServiceBusSourceOptions.LockDuration is {given}, but the {entity} locks messages for {read.LockDuration}: remove the option or make it agree.", nameof(options));
        }

        return properties?.LockDuration ?? options.LockDuration;
    }
}
