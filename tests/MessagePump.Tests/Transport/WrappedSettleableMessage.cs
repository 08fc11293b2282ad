namespace PriorityAsync.MessagePump.Tests.Transport;

/// <summary>
/// A test transport's message over a received one, written against the public settlement contract only: its public
/// settle calls go to the pump that owns it (<see cref="ISettleableMessage.RouteSettlementsThrough"/>), or else to its
/// own <see cref="SettleAsync"/>, which each test transport supplies.
/// </summary>
internal abstract class WrappedSettleableMessage(ILeasedMessage inner) : ISettleableMessage
{
    private ISettlementOwner? _owner;

    public string MessageId => inner.MessageId;

    public ReadOnlyMemory<byte> Body => inner.Body;

    public int DeliveryCount => inner.DeliveryCount;

    public DateTimeOffset LockedUntil => inner.LockedUntil;

    /// <summary>Gets the received message this one wraps.</summary>
    protected ILeasedMessage Inner => inner;

    public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => inner.RenewLockAsync(cancellationToken);

    public Task CompleteAsync(CancellationToken cancellationToken = default) => RouteAsync(MessageSettlement.Complete, cancellationToken);

    public Task AbandonAsync(CancellationToken cancellationToken = default) => RouteAsync(MessageSettlement.Abandon(), cancellationToken);

    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => RouteAsync(MessageSettlement.DeadLetter(reason), cancellationToken);

    public void RouteSettlementsThrough(ISettlementOwner owner) => _owner = owner;

    public abstract Task<SettlementOutcome> SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default);

    private Task RouteAsync(MessageSettlement settlement, CancellationToken cancellationToken) =>
        _owner is { } owner ? owner.SettleAsync(settlement, cancellationToken) : SettleAsync(settlement, cancellationToken);
}
