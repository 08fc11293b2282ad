using System.Diagnostics;

namespace PriorityAsync.MessagePump;

/// <summary>One delivery of a message of an <see cref="InMemoryQueue"/>, holding its lock token.</summary>
/// <remarks>
/// Once a <see cref="PriorityMessagePump"/> has received the delivery, its settle calls go through the pump's settlement,
/// as <see cref="MessageContext.CompleteAsync"/> and its siblings do: the pump counts the settlement as what it was and
/// does not settle the message again when the handler returns.
/// </remarks>
internal sealed class InMemoryMessage : ISettleableMessage
{
    private long _lockedUntilTicks;
    private ISettlementOwner? _owner;

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
    public Task CompleteAsync(CancellationToken cancellationToken = default) => RouteAsync(MessageSettlement.Complete, cancellationToken);

    /// <inheritdoc />
    public Task AbandonAsync(CancellationToken cancellationToken = default) => RouteAsync(MessageSettlement.Abandon(), cancellationToken);

    /// <inheritdoc />
    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return RouteAsync(MessageSettlement.DeadLetter(reason), cancellationToken);
    }

    /// <inheritdoc />
    void ISettleableMessage.RouteSettlementsThrough(ISettlementOwner owner)
    {
        ArgumentNullException.ThrowIfNull(owner);
        var previous = Interlocked.Exchange(ref _owner, owner);
        Debug.Assert(previous is null, "A delivery is owned by one pump.");
    }

    /// <inheritdoc />
    /// <remarks>
    /// The in-memory queue keeps no dead-letter description (it is dropped) and has no defer
    /// (<see cref="NotSupportedException"/>); it takes no transport data (<see cref="ArgumentException"/>).
    /// </remarks>
    public async Task<SettlementOutcome> SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(settlement);
        if (settlement.TransportData is not null)
        {
            throw new ArgumentException("The in-memory queue takes no transport data with a settlement.", nameof(settlement));
        }

        await (settlement.Kind switch
        {
            SettlementKind.Complete => Queue.CompleteAsync(LockToken, cancellationToken),
            SettlementKind.Abandon => Queue.AbandonAsync(LockToken, cancellationToken),
            SettlementKind.DeadLetter => Queue.DeadLetterAsync(LockToken, settlement.Reason ?? "DeadLettered", cancellationToken),
            _ => throw new NotSupportedException("The in-memory queue has no defer."),
        });
        return SettlementOutcome.Confirmed;
    }

    /// <summary>A public settle call: through the pump that owns the delivery, or straight to the queue.</summary>
    private Task RouteAsync(MessageSettlement settlement, CancellationToken cancellationToken) =>
        Volatile.Read(ref _owner) is { } owner ? owner.SettleAsync(settlement, cancellationToken) : SettleAsync(settlement, cancellationToken);

    internal void SetLockedUntil(DateTimeOffset lockedUntil) => Volatile.Write(ref _lockedUntilTicks, lockedUntil.UtcTicks);

    /// <inheritdoc />
    public override string ToString() => $"{MessageId} (delivery {DeliveryCount}, lock {LockToken})";
}
