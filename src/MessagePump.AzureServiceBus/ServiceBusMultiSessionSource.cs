using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// An <see cref="IMessageSource"/> over up to <see cref="MaxConcurrentSessions"/> sessions of a session-enabled queue or
/// subscription at once, each accepted with its own session receiver (a <see cref="ServiceBusSessionMessageSource"/>):
/// a receive takes the next message of every session that has none out, so sessions run side by side while each
/// stays in order. A session that has nothing more for now, or whose lock was lost, is closed (releasing it to other
/// consumers), and the next session with messages is accepted in its place.
/// </summary>
/// <remarks>Open it with <see cref="ServiceBusTransport.OpenSessionsAsync"/>. Receives are serialized.</remarks>
public sealed class ServiceBusMultiSessionSource : IMessageSource, IAsyncDisposable
{
    private readonly ServiceBusTransport _transport;
    private readonly ServiceBusSourceOptions _options;
    private readonly List<ServiceBusSessionMessageSource> _sessions = [];
    private readonly SemaphoreSlim _receiving = new(1, 1);
    private int _next;
    private bool _disposed;

    internal ServiceBusMultiSessionSource(ServiceBusTransport transport, ServiceBusEntity entity, int maxConcurrentSessions, TimeSpan? lockDuration, ServiceBusSourceOptions options)
    {
        _transport = transport;
        _options = options;
        Entity = entity;
        MaxConcurrentSessions = maxConcurrentSessions;
        LockDuration = lockDuration;
    }

    /// <summary>Gets the entity the sessions belong to.</summary>
    public ServiceBusEntity Entity { get; }

    /// <summary>Gets the most sessions held at once.</summary>
    public int MaxConcurrentSessions { get; }

    /// <summary>Gets the entity's lock duration (the session lock's): read from the entity, or the option; <see langword="null"/> when neither was available.</summary>
    public TimeSpan? LockDuration { get; }

    /// <summary>Gets the identifiers of the sessions held now.</summary>
    public IReadOnlyList<string> ActiveSessions
    {
        get
        {
            lock (_sessions)
            {
                return [.. _sessions.Select(s => s.SessionId)];
            }
        }
    }

    /// <inheritdoc />
    /// <remarks><see cref="ServiceBusMessageSource.MessagingSystemName"/>.</remarks>
    string IMessageSource.MessagingSystem => ServiceBusMessageSource.MessagingSystemName;

    /// <inheritdoc />
    /// <remarks>The entity's path (<see cref="ServiceBusEntity.Path"/>).</remarks>
    string? IMessageSource.DestinationName => Entity.Path;

    /// <summary>Receives the next message of one session (see <see cref="ReceiveBatchAsync"/>).</summary>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>A message, or <see langword="null"/>.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        var batch = await ReceiveBatchAsync(1, cancellationToken).ConfigureAwait(false);
        return batch.Count > 0 ? batch[0] : null;
    }

    /// <summary>
    /// Receives the next message of each held session that has none out, up to <paramref name="maxMessages"/>; when
    /// that finds nothing and fewer than <see cref="MaxConcurrentSessions"/> sessions are held, accepts the next
    /// session that has messages (waiting up to <see cref="ServiceBusSourceOptions.MaxWaitTime"/>) and receives from it.
    /// </summary>
    /// <param name="maxMessages">The most messages to return; at least 1.</param>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>At most one message per session; none when no session had one.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxMessages"/> is zero or negative.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
        await _receiving.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            var received = await ReceiveFromHeldAsync(maxMessages, cancellationToken).ConfigureAwait(false);
            if (received.Count == 0 && Count() < MaxConcurrentSessions && await AcceptNextAsync(cancellationToken).ConfigureAwait(false) is { } session)
            {
                received.AddRange(await session.ReceiveNextAsync(TimeSpan.Zero, cancellationToken).ConfigureAwait(false));
            }

            return received;
        }
        finally
        {
            _receiving.Release();
        }
    }

    /// <summary>Closes every held session.</summary>
    /// <returns>A task that completes when they are closed.</returns>
    public async ValueTask DisposeAsync()
    {
        await _receiving.WaitAsync().ConfigureAwait(false);
        ServiceBusSessionMessageSource[] held;
        lock (_sessions)
        {
            _disposed = true;
            held = [.. _sessions];
            _sessions.Clear();
        }

        foreach (var session in held)
        {
            await session.DisposeAsync().ConfigureAwait(false);
        }

        _receiving.Release();
    }

    /// <inheritdoc />
    public override string ToString() => $"ServiceBusMultiSessionSource of the {Entity} (up to {MaxConcurrentSessions} sessions)";

    private int Count()
    {
        lock (_sessions)
        {
            return _sessions.Count;
        }
    }

    private async Task<List<ILeasedMessage>> ReceiveFromHeldAsync(int maxMessages, CancellationToken cancellationToken)
    {
        ServiceBusSessionMessageSource[] held;
        lock (_sessions)
        {
            held = [.. _sessions];
        }

        var received = new List<ILeasedMessage>();
        var retired = new List<ServiceBusSessionMessageSource>();
        for (var i = 0; i < held.Length && received.Count < maxMessages; i++)
        {
            var session = held[(_next + i) % held.Length];
            if (session.IsSessionLost)
            {
                retired.Add(session);
                continue;
            }

            if (session.HasMessageOut)
            {
                continue;
            }

            var batch = await session.ReceiveNextAsync(TimeSpan.Zero, cancellationToken).ConfigureAwait(false);
            if (batch.Count == 0 && !session.HasMessageOut)
            {
                retired.Add(session); // nothing more for now: release it so another consumer, or a later accept, takes it
            }

            received.AddRange(batch);
        }

        _next = held.Length == 0 ? 0 : (_next + 1) % held.Length;
        foreach (var session in retired)
        {
            lock (_sessions)
            {
                _sessions.Remove(session);
            }

            await session.DisposeAsync().ConfigureAwait(false);
        }

        return received;
    }

    private async Task<ServiceBusSessionMessageSource?> AcceptNextAsync(CancellationToken cancellationToken)
    {
        using var bounded = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        bounded.CancelAfter(_options.MaxWaitTime);
        ServiceBusSessionMessageSource session;
        try
        {
            session = await _transport.AcceptCoreAsync(Entity, sessionId: null, LockDuration, _options, bounded.Token).ConfigureAwait(false);
        }
        catch (Exception ex) when (!cancellationToken.IsCancellationRequested && (ex is OperationCanceledException || (ex is TransientTransportException && ServiceBusErrors.IsNoSessionAvailable(ex.InnerException))))
        {
            return null; // no session has messages now
        }

        lock (_sessions)
        {
            _sessions.Add(session);
        }

        return session;
    }
}
