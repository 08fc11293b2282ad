namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>
/// A queue, a topic's subscription or a dead-letter sub-queue of a <see cref="ServiceBusTestBroker"/>: its messages,
/// locks and counters. Every member is safe to call from any thread; counts judge expired locks on the broker's clock first.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Naming", "CA1711:Identifiers should not have incorrect suffix", Justification = "It models a Service Bus queue; the name is part of the test broker's public API.")]
public sealed partial class ServiceBusTestQueue
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
    private int _abandonedCount;
    private int _renewCount;
    private int _refusedRenewCount;
    private int _nextConsumer;

    internal ServiceBusTestQueue(ServiceBusTestBroker broker, string path, ServiceBusTestEntityOptions options, bool isDeadLetterQueue)
    {
        _broker = broker;
        Path = path;
        LockDuration = options.LockDuration;
        MaxDeliveryCount = isDeadLetterQueue ? int.MaxValue : options.MaxDeliveryCount;
        RequiresSession = !isDeadLetterQueue && options.RequiresSession;
        _timeToLive = new TimeToLive(isDeadLetterQueue ? TimeSpan.MaxValue : options.DefaultMessageTimeToLive, options.DeadLetteringOnMessageExpiration);
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
    /// <remarks>
    /// The locks a receive link held (a session's, or messages received and not settled) are freed when the link's close
    /// completes, just after the broker answered the client's detach: a test that counts right after closing a receiver
    /// (or stopping a processor, which closes its receivers) may still see them for a few milliseconds; wait for the
    /// count (bounded) rather than read it once.
    /// </remarks>
    public int LockedCount => _broker.Operate(_ => _locked.Count);

    /// <summary>Messages this entity moved to its dead-letter sub-queue so far (by the client or by the max delivery count).</summary>
    public int DeadLetterCount => _broker.Operate(_ => _deadLetters.Count);

    /// <summary>Messages completed so far (in ReceiveAndDelete mode: delivered).</summary>
    public int CompletedCount => _broker.Operate(_ => _completedCount);

    /// <summary>
    /// Abandons this entity took so far (a client's abandon of a message it held, the last of which may dead-letter it at
    /// <see cref="MaxDeliveryCount"/>); a lock that expires or a receive link that closes returns its messages without
    /// counting here.
    /// </summary>
    public int AbandonedCount => _broker.Operate(_ => _abandonedCount);

    /// <summary>Renew-lock and renew-session-lock requests answered for this entity (faulted answers included).</summary>
    public int RenewCount => _broker.Operate(_ => _renewCount);

    /// <summary>
    /// Renew requests of those answered lock-lost because the lock was no longer held: the message settled, its lock
    /// expired, its link detached, or the session held elsewhere or released. Injected faults are not counted. A consumer
    /// that never renews a lock it has already settled or lost keeps this at 0.
    /// </summary>
    public int RefusedRenewCount => _broker.Operate(_ => _refusedRenewCount);

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
        var expiresAt = IsDeadLetterQueue ? null : _timeToLive.Apply(ref encoded, visibleAt);
        var message = new StoredMessage(_broker.NextSequenceNumber(), encoded, messageId, sessionId, visibleAt)
        {
            ExpiresAt = expiresAt,
            DeadLetterSource = deadLetterSource,
            DeliveryCount = deliveryCount,
            VisibleAt = visibleAt,
        };
        _available.Add(message.SequenceNumber, message);
        return message.SequenceNumber;
    }

    /// <summary>True when a scheduled message whose time has not come has this sequence number.</summary>
    internal bool IsScheduledLocked(long sequenceNumber, DateTimeOffset now) =>
        _available.TryGetValue(sequenceNumber, out var message) && message.VisibleAt > now;

    /// <summary>Removes a scheduled message whose time has not come; false when there is none with that sequence number.</summary>
    internal bool CancelScheduledLocked(long sequenceNumber, DateTimeOffset now) =>
        IsScheduledLocked(sequenceNumber, now) && _available.Remove(sequenceNumber);

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

    /// <summary>Messages from a sequence number on (available, scheduled and locked alike), in order; only those of <paramref name="sessionId"/> when given (a session receiver's peek).</summary>
    internal List<StoredMessage> PeekLocked(long fromSequenceNumber, int count, string? sessionId = null) =>
        _available.Values.Concat(_locked.Values).Concat(_deferred.Values)
            .Where(m => m.SequenceNumber >= fromSequenceNumber && (sessionId is null || string.Equals(m.SessionId, sessionId, StringComparison.Ordinal)))
            .OrderBy(m => m.SequenceNumber)
            .Take(count)
            .ToList();

    internal void AddConsumerLocked(IConsumer consumer) => _consumers.Add(consumer);
}
