namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>One message held by an entity: its encoded AMQP form and the broker's bookkeeping.</summary>
internal sealed class StoredMessage
{
    public StoredMessage(long sequenceNumber, byte[] encoded, string messageId, string? sessionId, DateTimeOffset enqueuedTime)
    {
        SequenceNumber = sequenceNumber;
        Encoded = encoded;
        MessageId = messageId;
        SessionId = sessionId;
        EnqueuedTime = enqueuedTime;
    }

    public long SequenceNumber { get; }

    /// <summary>The bare message as the sender encoded it (header and annotations are rewritten on each delivery).</summary>
    public byte[] Encoded { get; set; }

    public string MessageId { get; }

    public string? SessionId { get; }

    public DateTimeOffset EnqueuedTime { get; }

    /// <summary>Deliveries so far (the AMQP header carries the count before the current delivery).</summary>
    public int DeliveryCount { get; set; }

    public Guid LockToken { get; set; }

    public DateTimeOffset LockedUntil { get; set; }

    /// <summary>The consumer that holds the lock, or null when the message is available.</summary>
    public IConsumer? Holder { get; set; }

    /// <summary>True once the message was deferred: it is only delivered by sequence number, and returns to the deferred set.</summary>
    public bool Deferred { get; set; }

    /// <summary>When a scheduled message becomes available (its enqueue time otherwise).</summary>
    public DateTimeOffset VisibleAt { get; init; }

    /// <summary>When the message expires on the broker's clock (its time-to-live from its enqueue time), or null when it never does.</summary>
    public DateTimeOffset? ExpiresAt { get; init; }

    /// <summary>The entity a dead-lettered message came from (x-opt-deadletter-source).</summary>
    public string? DeadLetterSource { get; init; }
}
