namespace PriorityAsync.Messaging;

/// <summary>One delivery of a message of an <see cref="InMemoryQueue"/>, holding its lock token.</summary>
public sealed class InMemoryMessage : ILeasedMessage
{
    private readonly InMemoryQueue _queue;
    private long _lockedUntilTicks;

    internal InMemoryMessage(InMemoryQueue queue, InMemoryQueue.Entry entry, Guid lockToken, int deliveryCount, DateTimeOffset lockedUntil)
    {
        _queue = queue;
        MessageId = entry.MessageId;
        Body = entry.Body;
        LockToken = lockToken;
        DeliveryCount = deliveryCount;
        _lockedUntilTicks = lockedUntil.UtcTicks;
    }

    /// <inheritdoc />
    public string MessageId { get; }

    /// <inheritdoc />
    public ReadOnlyMemory<byte> Body { get; }

    /// <summary>Gets the token of this delivery's lock; a redelivery gets a fresh one.</summary>
    public Guid LockToken { get; }

    /// <inheritdoc />
    public int DeliveryCount { get; }

    /// <inheritdoc />
    public DateTimeOffset LockedUntil => new(Volatile.Read(ref _lockedUntilTicks), TimeSpan.Zero);

    /// <inheritdoc />
    public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        var lockedUntil = await _queue.RenewAsync(LockToken, cancellationToken).ConfigureAwait(false);
        Volatile.Write(ref _lockedUntilTicks, lockedUntil.UtcTicks);
        return lockedUntil;
    }

    /// <inheritdoc />
    public Task CompleteAsync(CancellationToken cancellationToken = default) => _queue.CompleteAsync(LockToken, cancellationToken);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) => _queue.AbandonAsync(LockToken, cancellationToken);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return _queue.DeadLetterAsync(LockToken, reason, cancellationToken);
    }

    /// <inheritdoc />
    public override string ToString() => $"{MessageId} (delivery {DeliveryCount}, lock {LockToken})";
}
