using System.Diagnostics;

namespace PriorityAsync.MessagePump;

/// <summary>One delivery of a message of an <see cref="InMemoryQueue"/>, holding its lock token.</summary>
/// <remarks>
/// Once a <see cref="PriorityMessagePump"/> has received the delivery, its settle calls go through the pump's settlement,
/// as <see cref="MessageContext.CompleteAsync"/> and its siblings do: the pump counts the settlement as what it was and
/// does not settle the message again when the handler returns.
/// </remarks>
internal sealed class InMemoryMessage : ILeasedMessage, IPumpRoutedMessage
{
    private long _lockedUntilTicks;
    private PumpDelivery? _owner;

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
    public Task CompleteAsync(CancellationToken cancellationToken = default) =>
        Volatile.Read(ref _owner) is { } owner
            ? owner.SettleForMessageAsync(Settlement.Complete, reason: null, description: null, cancellationToken)
            : Queue.CompleteAsync(LockToken, cancellationToken);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) =>
        Volatile.Read(ref _owner) is { } owner
            ? owner.SettleForMessageAsync(Settlement.Abandon, reason: null, description: null, cancellationToken)
            : Queue.AbandonAsync(LockToken, cancellationToken);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return Volatile.Read(ref _owner) is { } owner
            ? owner.SettleForMessageAsync(Settlement.DeadLetter, reason, description: null, cancellationToken)
            : Queue.DeadLetterAsync(LockToken, reason, cancellationToken);
    }

    void IPumpRoutedMessage.RouteSettlementsThrough(PumpDelivery delivery)
    {
        var previous = Interlocked.Exchange(ref _owner, delivery);
        Debug.Assert(previous is null, "A delivery is owned by one pump.");
    }

    /// <remarks>The in-memory queue keeps no dead-letter description: <paramref name="description"/> is dropped.</remarks>
    Task IPumpRoutedMessage.SettleDirectAsync(Settlement settlement, string? reason, string? description, CancellationToken cancellationToken) => settlement switch
    {
        Settlement.Complete => Queue.CompleteAsync(LockToken, cancellationToken),
        Settlement.Abandon => Queue.AbandonAsync(LockToken, cancellationToken),
        _ => Queue.DeadLetterAsync(LockToken, reason!, cancellationToken),
    };

    internal void SetLockedUntil(DateTimeOffset lockedUntil) => Volatile.Write(ref _lockedUntilTicks, lockedUntil.UtcTicks);

    /// <inheritdoc />
    public override string ToString() => $"{MessageId} (delivery {DeliveryCount}, lock {LockToken})";
}
