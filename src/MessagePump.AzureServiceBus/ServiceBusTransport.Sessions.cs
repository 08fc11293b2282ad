using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <content>Sessions: accepting one session, or holding several at once.</content>
public sealed partial class ServiceBusTransport
{
    /// <summary>Accepts the next session of a session-enabled queue or subscription that has messages, and opens a source on it.</summary>
    /// <param name="entity">The queue or subscription; it must require sessions.</param>
    /// <param name="options">The source's options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <param name="cancellationToken">Cancels the wait for a session.</param>
    /// <returns>The session's source; dispose it to release the session.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="entity"/> is null.</exception>
    /// <exception cref="ArgumentException">The entity does not exist or does not require sessions; or an option breaks its rule.</exception>
    /// <exception cref="TransientTransportException">No session became available within the client's try timeout, or the broker failed in a way worth retrying.</exception>
    /// <exception cref="InvalidOperationException">The credentials may not receive from the entity.</exception>
    public Task<ServiceBusSessionMessageSource> AcceptNextSessionAsync(ServiceBusEntity entity, ServiceBusSourceOptions? options = null, CancellationToken cancellationToken = default) =>
        AcceptAsync(entity, sessionId: null, options, cancellationToken);

    /// <summary>Accepts the session <paramref name="sessionId"/> of a session-enabled queue or subscription, and opens a source on it.</summary>
    /// <param name="entity">The queue or subscription; it must require sessions.</param>
    /// <param name="sessionId">The session's identifier.</param>
    /// <param name="options">The source's options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The session's source; dispose it to release the session.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="entity"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="sessionId"/> is empty, the entity does not exist or does not require sessions, or an option breaks its rule.</exception>
    /// <exception cref="TransientTransportException">The session is locked by another receiver, or the broker failed in a way worth retrying.</exception>
    /// <exception cref="InvalidOperationException">The credentials may not receive from the entity.</exception>
    public Task<ServiceBusSessionMessageSource> AcceptSessionAsync(ServiceBusEntity entity, string sessionId, ServiceBusSourceOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(sessionId);
        return AcceptAsync(entity, sessionId, options, cancellationToken);
    }

    /// <summary>
    /// Opens a source that holds up to <paramref name="maxConcurrentSessions"/> sessions of a session-enabled queue or
    /// subscription at once, accepting the next session with messages as each one runs dry or is lost.
    /// </summary>
    /// <param name="entity">The queue or subscription; it must require sessions.</param>
    /// <param name="maxConcurrentSessions">The most sessions held at once; at least 1.</param>
    /// <param name="options">The options of each session's source; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The source; dispose it to release its sessions.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="entity"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxConcurrentSessions"/> is zero or negative.</exception>
    /// <exception cref="ArgumentException">The entity does not exist or does not require sessions; or an option breaks its rule.</exception>
    public async Task<ServiceBusMultiSessionSource> OpenSessionsAsync(ServiceBusEntity entity, int maxConcurrentSessions, ServiceBusSourceOptions? options = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(entity);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxConcurrentSessions);
        options = (options ?? new ServiceBusSourceOptions()).Clone();
        options.Validate();
        options.ThrowIfSubQueue(nameof(options));
        ObjectDisposedException.ThrowIf(_client.IsClosed, this);
        var lockDuration = ResolveSessionLockDuration(entity, await ReadPropertiesAsync(entity, cancellationToken).ConfigureAwait(false), options);
        return new ServiceBusMultiSessionSource(this, entity, maxConcurrentSessions, lockDuration, options);
    }

    private async Task<ServiceBusSessionMessageSource> AcceptAsync(ServiceBusEntity entity, string? sessionId, ServiceBusSourceOptions? options, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(entity);
        options = (options ?? new ServiceBusSourceOptions()).Clone();
        options.Validate();
        options.ThrowIfSubQueue(nameof(options));
        ObjectDisposedException.ThrowIf(_client.IsClosed, this);
        var lockDuration = ResolveSessionLockDuration(entity, await ReadPropertiesAsync(entity, cancellationToken).ConfigureAwait(false), options);
        return await AcceptCoreAsync(entity, sessionId, lockDuration, options, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>Accepts a session (the next one, or <paramref name="sessionId"/>) and wraps its receiver; failures mapped once.</summary>
    internal async Task<ServiceBusSessionMessageSource> AcceptCoreAsync(ServiceBusEntity entity, string? sessionId, TimeSpan? lockDuration, ServiceBusSourceOptions options, CancellationToken cancellationToken)
    {
        var receiverOptions = new ServiceBusSessionReceiverOptions { ReceiveMode = ServiceBusReceiveMode.PeekLock, PrefetchCount = options.PrefetchCount };
        ServiceBusSessionReceiver receiver;
        try
        {
            receiver = (entity.SubscriptionName, sessionId) switch
            {
                ({ } subscription, null) => await _client.AcceptNextSessionAsync(entity.QueueOrTopicName, subscription, receiverOptions, cancellationToken).ConfigureAwait(false),
                ({ } subscription, { } id) => await _client.AcceptSessionAsync(entity.QueueOrTopicName, subscription, id, receiverOptions, cancellationToken).ConfigureAwait(false),
                (null, null) => await _client.AcceptNextSessionAsync(entity.QueueOrTopicName, receiverOptions, cancellationToken).ConfigureAwait(false),
                (null, { } id) => await _client.AcceptSessionAsync(entity.QueueOrTopicName, id, receiverOptions, cancellationToken).ConfigureAwait(false),
            };
        }
        catch (Exception ex) when (ServiceBusErrors.TranslateReceive(ex, entity, sessions: true, cancellationToken) is { } translated)
        {
            if (translated is InvalidOperationException && ex is ServiceBusException { Reason: ServiceBusFailureReason.MessagingEntityNotFound })
            {
                throw new ArgumentException(translated.Message, nameof(entity), ex);
            }

#pragma warning disable MA0027 // not a rethrow: the mapped exception carries ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }

        return new ServiceBusSessionMessageSource(receiver, entity, lockDuration, options, ownsReceiver: true);
    }

    private static TimeSpan? ResolveSessionLockDuration(ServiceBusEntity entity, EntityProperties? properties, ServiceBusSourceOptions options)
    {
        if (properties is { RequiresSession: false })
        {
            throw new ArgumentException($"The {entity} does not require sessions: session options apply only to a session-enabled entity; open it with OpenAsync.", nameof(entity));
        }

        return ResolveLockDuration(entity, properties, options);
    }
}
