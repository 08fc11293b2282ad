using System.Globalization;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>
/// A queue, a topic's subscription or a dead-letter sub-queue of a <see cref="ServiceBusTestBroker"/>: its messages,
/// locks and counters. Every member is safe to call from any thread; counts judge expired locks on the broker's clock first.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Naming", "CA1711:Identifiers should not have incorrect suffix", Justification = "It models a Service Bus queue; the name is the issue's public contract.")]
public sealed class ServiceBusTestQueue
{
    internal const string DeadLetterSuffix = "/$DeadLetterQueue";
    internal const string MaxDeliveryCountExceeded = "MaxDeliveryCountExceeded";

    private readonly ServiceBusTestBroker _broker;
    private readonly SortedList<long, StoredMessage> _available = [];
    private readonly Dictionary<Guid, StoredMessage> _locked = [];
    private readonly SortedList<long, StoredMessage> _deferred = [];
    private readonly Dictionary<string, SessionLock> _sessions = new(StringComparer.Ordinal);
    private readonly List<ServiceBusTestDeadLetter> _deadLetters = [];
    private readonly Dictionary<string, int> _completions = new(StringComparer.Ordinal);
    private readonly List<IConsumer> _consumers = [];
    private int _completedCount;
    private int _renewCount;
    private int _nextConsumer;

    internal ServiceBusTestQueue(ServiceBusTestBroker broker, string path, ServiceBusTestEntityOptions options, bool isDeadLetterQueue)
    {
        _broker = broker;
        Path = path;
        LockDuration = options.LockDuration;
        MaxDeliveryCount = isDeadLetterQueue ? int.MaxValue : options.MaxDeliveryCount;
        RequiresSession = !isDeadLetterQueue && options.RequiresSession;
        DeadLetterQueue = isDeadLetterQueue
            ? null
            : new ServiceBusTestQueue(broker, path + DeadLetterSuffix, options, isDeadLetterQueue: true);
    }

    /// <summary>The entity path receivers use: <c>queue</c>, <c>topic/Subscriptions/sub</c> or <c>…/$DeadLetterQueue</c>.</summary>
    public string Path { get; }

    /// <summary>How long a delivered message (or a session) stays locked without renewal.</summary>
    public TimeSpan LockDuration { get; }

    /// <summary>Deliveries after which an abandoned or expired message is dead-lettered (<see cref="int.MaxValue"/> for a dead-letter sub-queue).</summary>
    public int MaxDeliveryCount { get; }

    /// <summary>Whether messages need a session id and receivers must accept a session.</summary>
    public bool RequiresSession { get; }

    /// <summary>The dead-letter sub-queue (<c>Path + "/$DeadLetterQueue"</c>), or null when this is one.</summary>
    public ServiceBusTestQueue? DeadLetterQueue { get; }

    /// <summary>Messages waiting to be delivered (scheduled messages count once their time has come).</summary>
    public int ActiveCount => _broker.Operate(now => _available.Values.Count(m => m.VisibleAt <= now));

    /// <summary>Deferred messages (received again only by sequence number).</summary>
    public int DeferredCount => _broker.Operate(_ => _deferred.Count);

    /// <summary>Scheduled messages whose enqueue time (on the broker's clock) has not come yet.</summary>
    public int ScheduledCount => _broker.Operate(now => _available.Values.Count(m => m.VisibleAt > now));

    /// <summary>Messages delivered and locked (not yet settled, lock not yet expired).</summary>
    public int LockedCount => _broker.Operate(_ => _locked.Count);

    /// <summary>Messages this entity moved to its dead-letter sub-queue so far (by the client or by the max delivery count).</summary>
    public int DeadLetterCount => _broker.Operate(_ => _deadLetters.Count);

    /// <summary>Messages completed so far (in ReceiveAndDelete mode: delivered).</summary>
    public int CompletedCount => _broker.Operate(_ => _completedCount);

    /// <summary>Renew-lock and renew-session-lock requests answered for this entity (faulted answers included).</summary>
    public int RenewCount => _broker.Operate(_ => _renewCount);

    /// <summary>The messages this entity dead-lettered, in order.</summary>
    public IReadOnlyList<ServiceBusTestDeadLetter> DeadLetters => _broker.Operate(_ => _deadLetters.ToArray());

    /// <summary>How many times a message with this id was completed (exactly-once checks expect 1).</summary>
    /// <param name="messageId">The message id.</param>
    /// <returns>The number of completions.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="messageId"/> is null.</exception>
    public int CompletionsOf(string messageId)
    {
        ArgumentNullException.ThrowIfNull(messageId);
        return _broker.Operate(_ => _completions.GetValueOrDefault(messageId));
    }

    /// <summary>Enqueues a message without AMQP, as a sender would (a Data body section).</summary>
    /// <param name="body">The message body.</param>
    /// <param name="messageId">The message id; a new one when null.</param>
    /// <param name="sessionId">The session id; required when <see cref="RequiresSession"/> is true.</param>
    /// <param name="applicationProperties">Application properties (AMQP simple types: string, numbers, bool, Guid, DateTime, byte[]).</param>
    /// <returns>The message id.</returns>
    /// <exception cref="ArgumentException">The session id is missing for a session entity, or empty.</exception>
    /// <exception cref="InvalidOperationException">This is a dead-letter sub-queue.</exception>
    public string Send(ReadOnlyMemory<byte> body, string? messageId = null, string? sessionId = null, IReadOnlyDictionary<string, object>? applicationProperties = null)
    {
        if (DeadLetterQueue is null)
        {
            throw new InvalidOperationException($"'{Path}' is a dead-letter sub-queue; messages reach it by being dead-lettered.");
        }

        if (messageId is { Length: 0 })
        {
            throw new ArgumentException("The message id must not be empty.", nameof(messageId));
        }

        if (sessionId is { Length: 0 })
        {
            throw new ArgumentException("The session id must not be empty.", nameof(sessionId));
        }

        if (RequiresSession && sessionId is null)
        {
            throw new ArgumentException($"'{Path}' requires sessions: every message needs a session id.", nameof(sessionId));
        }

        var id = messageId ?? Guid.NewGuid().ToString("N");
        var encoded = AmqpCodec.Encode(body, id, sessionId, applicationProperties);
        _broker.Operate(now =>
        {
            EnqueueLocked(encoded, id, sessionId, now, deadLetterSource: null, deliveryCount: 0);
            return 0;
        });
        return id;
    }

    /// <inheritdoc/>
    public override string ToString() => Path;

    internal bool IsDeadLetterQueue => DeadLetterQueue is null;

    internal long EnqueueLocked(byte[] encoded, string messageId, string? sessionId, DateTimeOffset now, string? deadLetterSource, int deliveryCount, DateTimeOffset? scheduledEnqueueTime = null)
    {
        var visibleAt = scheduledEnqueueTime is { } at && at > now ? at : now;
        var message = new StoredMessage(_broker.NextSequenceNumber(), encoded, messageId, sessionId, visibleAt)
        {
            DeadLetterSource = deadLetterSource,
            DeliveryCount = deliveryCount,
            VisibleAt = visibleAt,
        };
        _available.Add(message.SequenceNumber, message);
        return message.SequenceNumber;
    }

    /// <summary>Removes a scheduled message whose time has not come; false when there is none with that sequence number.</summary>
    internal bool CancelScheduledLocked(long sequenceNumber, DateTimeOffset now) =>
        _available.TryGetValue(sequenceNumber, out var message) && message.VisibleAt > now && _available.Remove(sequenceNumber);

    /// <summary>
    /// Receives deferred messages by sequence number (receive-by-sequence-number): locked for the requester (settled over
    /// $management) or, for ReceiveAndDelete, removed. Null when one of them is not deferred here.
    /// </summary>
    internal List<PendingDelivery>? ReceiveDeferredLocked(long[] sequenceNumbers, bool receiveAndDelete, DateTimeOffset now)
    {
        if (!Array.TrueForAll(sequenceNumbers, _deferred.ContainsKey))
        {
            return null;
        }

        var deliveries = new List<PendingDelivery>();
        foreach (var sequenceNumber in sequenceNumbers)
        {
            var message = _deferred[sequenceNumber];
            _deferred.Remove(sequenceNumber);
            var headerCount = message.DeliveryCount++;
            if (receiveAndDelete)
            {
                CountCompletionLocked(message);
                deliveries.Add(new PendingDelivery(ManagementConsumer.ReceiveAndDeleteInstance, this, message, Guid.Empty, headerCount, now));
                continue;
            }

            message.LockToken = Guid.NewGuid();
            message.LockedUntil = now + LockDuration;
            message.Holder = ManagementConsumer.PeekLockInstance;
            _locked.Add(message.LockToken, message);
            deliveries.Add(new PendingDelivery(ManagementConsumer.PeekLockInstance, this, message, message.LockToken, headerCount, message.LockedUntil));
        }

        return deliveries;
    }

    /// <summary>Messages from a sequence number on (available, scheduled and locked alike), in order.</summary>
    internal List<StoredMessage> PeekLocked(long fromSequenceNumber, int count) =>
        _available.Values.Concat(_locked.Values).Concat(_deferred.Values)
            .Where(m => m.SequenceNumber >= fromSequenceNumber)
            .OrderBy(m => m.SequenceNumber)
            .Take(count)
            .ToList();

    internal void AddConsumerLocked(IConsumer consumer) => _consumers.Add(consumer);

    /// <summary>Judges every lock on <paramref name="now"/>: expired messages come back (or are dead-lettered), expired sessions are freed.</summary>
    internal void SweepLocked(DateTimeOffset now)
    {
        List<string>? expiredSessions = null;
        foreach (var session in _sessions.Values)
        {
            if (session.Holder is not null && session.LockedUntil <= now)
            {
                (expiredSessions ??= []).Add(session.SessionId);
            }
        }

        if (expiredSessions is not null)
        {
            foreach (var id in expiredSessions)
            {
                ReleaseSessionLocked(_sessions[id], now);
            }
        }

        List<StoredMessage>? expired = null;
        foreach (var message in _locked.Values)
        {
            if (!IsSessionBound(message) && message.LockedUntil <= now)
            {
                (expired ??= []).Add(message);
            }
        }

        if (expired is not null)
        {
            foreach (var message in expired)
            {
                ReturnLocked(message, now);
            }
        }

        _consumers.RemoveAll(c => c.IsClosed);
    }

    /// <summary>The earliest lock or session-lock expiry, if any.</summary>
    internal DateTimeOffset? NextExpiryLocked(DateTimeOffset now)
    {
        DateTimeOffset? next = null;
        foreach (var message in _available.Values)
        {
            if (message.VisibleAt > now && (next is null || message.VisibleAt < next))
            {
                next = message.VisibleAt;
            }
        }

        foreach (var message in _locked.Values)
        {
            if (!IsSessionBound(message) && (next is null || message.LockedUntil < next))
            {
                next = message.LockedUntil;
            }
        }

        foreach (var session in _sessions.Values)
        {
            if (session.Holder is not null && (next is null || session.LockedUntil < next))
            {
                next = session.LockedUntil;
            }
        }

        return next;
    }

    /// <summary>Hands available messages to consumers with credit, round robin, locking each one.</summary>
    internal void CollectLocked(DateTimeOffset now, List<PendingDelivery> into)
    {
        if (_consumers.Count == 0 || _available.Count == 0)
        {
            return;
        }

        bool progress;
        do
        {
            progress = false;
            for (var i = 0; i < _consumers.Count && _available.Count > 0; i++)
            {
                var consumer = _consumers[(_nextConsumer + i) % _consumers.Count];
                if (consumer.IsClosed || consumer.Credit <= 0 || !HoldsItsSession(consumer))
                {
                    continue;
                }

                var message = NextFor(consumer, now);
                if (message is null)
                {
                    continue;
                }

                _available.Remove(message.SequenceNumber);
                consumer.Credit--;
                progress = true;
                var headerCount = message.DeliveryCount;
                message.DeliveryCount++;
                if (consumer.ReceiveAndDelete)
                {
                    CountCompletionLocked(message);
                    into.Add(new PendingDelivery(consumer, this, message, Guid.NewGuid(), headerCount, now));
                    continue;
                }

                message.LockToken = Guid.NewGuid();
                message.Holder = consumer;
                message.LockedUntil = consumer.SessionId is { } sessionId ? _sessions[sessionId].LockedUntil : now + LockDuration;
                _locked.Add(message.LockToken, message);
                into.Add(new PendingDelivery(consumer, this, message, message.LockToken, headerCount, message.LockedUntil));
            }

            _nextConsumer = _consumers.Count == 0 ? 0 : (_nextConsumer + 1) % _consumers.Count;
        }
        while (progress && _available.Count > 0);
    }

    /// <summary>Puts back a delivery that could not be sent (its link closed first).</summary>
    internal void UndoDeliveryLocked(PendingDelivery delivery)
    {
        if (delivery.Consumer.ReceiveAndDelete)
        {
            _completedCount--;
            _completions[delivery.Message.MessageId]--;
        }
        else if (!_locked.Remove(delivery.LockToken))
        {
            return;
        }

        delivery.Message.Holder = null;
        delivery.Message.DeliveryCount--;
        _available[delivery.Message.SequenceNumber] = delivery.Message;
    }

    internal SettleResult SettleLocked(IConsumer? consumer, Guid lockToken, SettleKind kind, string? reason, string? description, DateTimeOffset now, IReadOnlyList<KeyValuePair<string, object>>? propertiesToModify = null)
    {
        // As Service Bus: a lock belongs to the receive link that took it; once that link is detached, no settlement
        // (over the link, another link or the $management node) finds it, and the message comes back when it expires.
        if (!_locked.TryGetValue(lockToken, out var message) || (consumer is not null && !ReferenceEquals(message.Holder, consumer)) || message.Holder is { IsClosed: true })
        {
            return message?.SessionId is not null || consumer?.SessionId is not null ? SettleResult.SessionLockLost : SettleResult.LockLost;
        }

        if (propertiesToModify is { Count: > 0 } && kind is not SettleKind.Complete and not SettleKind.Release)
        {
            message.Encoded = AmqpCodec.WithApplicationProperties(message.Encoded, propertiesToModify);
        }

        switch (kind)
        {
            case SettleKind.Complete:
                _locked.Remove(lockToken);
                message.Holder = null;
                CountCompletionLocked(message);
                return SettleResult.Done;
            case SettleKind.Abandon:
                ReturnLocked(message, now);
                return SettleResult.Done;
            case SettleKind.Release:
                message.DeliveryCount--;
                ReturnLocked(message, now);
                return SettleResult.Done;
            case SettleKind.DeadLetter:
                _locked.Remove(lockToken);
                message.Holder = null;
                DeadLetterLocked(message, reason, description, now);
                return SettleResult.Done;
            case SettleKind.Defer:
                _locked.Remove(lockToken);
                message.Holder = null;
                message.Deferred = true;
                _deferred.Add(message.SequenceNumber, message);
                return SettleResult.Done;
            default:
                return SettleResult.NotSupported;
        }
    }

    /// <summary>Renews a message lock; null when the lock is unknown or already expired.</summary>
    internal DateTimeOffset? RenewLocked(Guid lockToken, DateTimeOffset now)
    {
        if (!_locked.TryGetValue(lockToken, out var message) || message.LockedUntil <= now || message.Holder is { IsClosed: true })
        {
            return null;
        }

        if (IsSessionBound(message))
        {
            return message.LockedUntil;
        }

        message.LockedUntil = now + LockDuration;
        return message.LockedUntil;
    }

    internal DateTimeOffset? RenewSessionLocked(string sessionId, DateTimeOffset now)
    {
        if (!_sessions.TryGetValue(sessionId, out var session) || session.Holder is null || session.LockedUntil <= now)
        {
            return null;
        }

        session.LockedUntil = now + LockDuration;
        foreach (var message in _locked.Values)
        {
            if (string.Equals(message.SessionId, sessionId, StringComparison.Ordinal))
            {
                message.LockedUntil = session.LockedUntil;
            }
        }

        return session.LockedUntil;
    }

    internal void CountRenewLocked() => _renewCount++;

    internal SessionLock? HeldSessionLocked(string sessionId) =>
        _sessions.TryGetValue(sessionId, out var session) && session.Holder is not null ? session : null;

    internal SessionLock GetOrAddSessionLocked(string sessionId)
    {
        if (!_sessions.TryGetValue(sessionId, out var session))
        {
            session = new SessionLock(sessionId);
            _sessions.Add(sessionId, session);
        }

        return session;
    }

    /// <summary>
    /// Locks a session for a consumer: the requested one, or (when null) the unlocked session with the oldest available
    /// message. Returns null when the requested session is locked by another receiver, or when none is available.
    /// </summary>
    internal SessionLock? TryAcquireSessionLocked(IConsumer consumer, string? requested, DateTimeOffset now)
    {
        SessionLock? session;
        if (requested is not null)
        {
            session = GetOrAddSessionLocked(requested);
            if (session.Holder is not null)
            {
                return null;
            }
        }
        else
        {
            session = null;
            foreach (var message in _available.Values)
            {
                if (message.VisibleAt <= now && message.SessionId is { } id && !(_sessions.TryGetValue(id, out var existing) && existing.Holder is not null))
                {
                    session = GetOrAddSessionLocked(id);
                    break;
                }
            }

            if (session is null)
            {
                return null;
            }
        }

        session.Holder = consumer;
        session.LockedUntil = now + LockDuration;
        return session;
    }

    /// <summary>A consumer's link closed: a session it held is released at once (its locked messages come back).</summary>
    internal void ReleaseConsumerLocked(IConsumer consumer, DateTimeOffset now)
    {
        _consumers.Remove(consumer);
        if (consumer.SessionId is { } sessionId && _sessions.TryGetValue(sessionId, out var session) && ReferenceEquals(session.Holder, consumer))
        {
            ReleaseSessionLocked(session, now);
        }
    }

    private void ReleaseSessionLocked(SessionLock session, DateTimeOffset now)
    {
        session.Holder = null;
        var held = _locked.Values.Where(m => string.Equals(m.SessionId, session.SessionId, StringComparison.Ordinal)).ToList();
        foreach (var message in held)
        {
            ReturnLocked(message, now);
        }
    }

    /// <summary>False for a session receiver whose session lock expired (or was taken over): it gets nothing more.</summary>
    private bool HoldsItsSession(IConsumer consumer) =>
        consumer.SessionId is not { } sessionId
        || (_sessions.TryGetValue(sessionId, out var session) && ReferenceEquals(session.Holder, consumer));

    /// <summary>True when the message's lock is its session's lock (a session entity).</summary>
    private bool IsSessionBound(StoredMessage message) => RequiresSession && message.SessionId is not null;

    private StoredMessage? NextFor(IConsumer consumer, DateTimeOffset now)
    {
        foreach (var message in _available.Values)
        {
            if (message.VisibleAt <= now && (consumer.SessionId is null ? message.SessionId is null || !RequiresSession : string.Equals(message.SessionId, consumer.SessionId, StringComparison.Ordinal)))
            {
                return message;
            }
        }

        return null;
    }

    /// <summary>An abandoned or expired message: back to the queue, or to the dead-letter sub-queue after the max delivery count.</summary>
    private void ReturnLocked(StoredMessage message, DateTimeOffset now)
    {
        _locked.Remove(message.LockToken);
        message.Holder = null;
        if (message.DeliveryCount >= MaxDeliveryCount)
        {
            DeadLetterLocked(
                message,
                MaxDeliveryCountExceeded,
                string.Create(CultureInfo.InvariantCulture, $"Message could not be consumed after {MaxDeliveryCount} delivery attempts."),
                now);
            return;
        }

        if (message.Deferred)
        {
            _deferred.Add(message.SequenceNumber, message);
            return;
        }

        _available.Add(message.SequenceNumber, message);
    }

    private void DeadLetterLocked(StoredMessage message, string? reason, string? description, DateTimeOffset now)
    {
        _deadLetters.Add(new ServiceBusTestDeadLetter(message.MessageId, reason, description, message.DeliveryCount));
        if (DeadLetterQueue is { } deadLetterQueue)
        {
            var encoded = AmqpCodec.WithDeadLetterProperties(message.Encoded, reason, description);
            deadLetterQueue.EnqueueLocked(encoded, message.MessageId, message.SessionId, now, Path, message.DeliveryCount);
        }
    }

    private void CountCompletionLocked(StoredMessage message)
    {
        _completedCount++;
        _completions[message.MessageId] = _completions.GetValueOrDefault(message.MessageId) + 1;
    }
}
