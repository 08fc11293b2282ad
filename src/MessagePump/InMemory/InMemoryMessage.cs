namespace PriorityAsync.MessagePump;

/// <summary>One delivery of a message of an <see cref="InMemoryQueue"/>, holding its lock token.</summary>
public sealed class InMemoryMessage : ILeasedMessage
{
    private long _lockedUntilTicks;

    internal InMemoryMessage(InMemoryQueue queue, InMemoryQueue.Entry entry, Guid lockToken, int deliveryCount, DateTimeOffset lockedUntil)
    {
        Queue = queue;
        MessageId = entry.MessageId;
        Body = entry.Body;
        Headers = entry.Headers;
        LockToken = lockToken;
        DeliveryCount = deliveryCount;
        _lockedUntilTicks = lockedUntil.UtcTicks;
    }

    /// <inheritdoc />
    public string MessageId { get; }

    /// <inheritdoc />
    public ReadOnlyMemory<byte> Body { get; }

    /// <inheritdoc />
    public IReadOnlyDictionary<string, string> Headers { get; }

    /// <summary>Gets the token of this delivery's lock; a redelivery gets a fresh one.</summary>
    public Guid LockToken { get; }

    /// <inheritdoc />
    public int DeliveryCount { get; }

    /// <inheritdoc />
    public DateTimeOffset LockedUntil => new(Volatile.Read(ref _lockedUntilTicks), TimeSpan.Zero);

    internal InMemoryQueue Queue { get; }

    /// <inheritdoc />
    public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => Queue.RenewAsync(this, cancellationToken);

    /// <inheritdoc />
    public Task CompleteAsync(CancellationToken cancellationToken = default) => Queue.CompleteAsync(LockToken, cancellationToken);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) => Queue.AbandonAsync(LockToken, cancellationToken);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return Queue.DeadLetterAsync(LockToken, reason, cancellationToken);
    }

    internal void SetLockedUntil(DateTimeOffset lockedUntil) => Volatile.Write(ref _lockedUntilTicks, lockedUntil.UtcTicks);

    /// <inheritdoc />
    public override string ToString() => $"{MessageId} (delivery {DeliveryCount}, lock {LockToken})";
}
