using System.Diagnostics;

namespace PriorityAsync.MessagePump;

/// <summary>
/// What a <see cref="PriorityMessagePump"/> handler gets with each message: the message, the state of its lease, its
/// settle calls, and <see cref="ShouldYield"/>, so that CPU-heavy handlers can <c>await</c>
/// <see cref="PriorityScheduler.YieldIfNeeded"/> to let lease renewals run. A handler's unit test makes one without a
/// pump with <see cref="MessagePumpModelFactory.MessageContext"/>. It is the handler's view only: the message's state
/// and path are the pump's (an internal per-message object).
/// </summary>
[DebuggerDisplay("{Message.MessageId,nq} (delivery {Message.DeliveryCount}, {LeaseState}, renewed {RenewalCount})")]
public sealed class MessageContext
{
    /// <summary>Makes the handler's view of <paramref name="delivery"/>.</summary>
    internal MessageContext(IDelivery delivery)
    {
        Delivery = delivery;
    }

    /// <summary>
    /// Gets the delivery this context shows: the pump's <see cref="PumpDelivery"/>, or a
    /// <see cref="DetachedDelivery"/> made by <see cref="MessagePumpModelFactory.MessageContext"/>.
    /// </summary>
    internal IDelivery Delivery { get; }

    /// <summary>Gets the message.</summary>
    public ILeasedMessage Message => Delivery.Message;

    /// <summary>Gets the state of the message's lease.</summary>
    public MessageLeaseState LeaseState => Delivery.LeaseState;

    /// <summary>Gets when the lease expires unless renewed again.</summary>
    public DateTimeOffset LockedUntil => Message.LockedUntil;

    /// <summary>Gets how many times the pump has renewed this delivery's lease (0 for a context made by <see cref="MessagePumpModelFactory"/>).</summary>
    public int RenewalCount => Delivery.RenewalCount;

    /// <summary>Gets a token canceled when the lease is lost or the pump stops without waiting any longer.</summary>
    public CancellationToken CancellationToken => Delivery.CancellationToken;

    /// <summary>Gets the pump's clock: a handler's delays and timeouts use it, so that they follow a virtual clock in tests.</summary>
    public TimeProvider TimeProvider => Delivery.TimeProvider;

    /// <summary>Gets whether more urgent work (a lease renewal) is waiting: a CPU-heavy handler should yield now.</summary>
    public bool ShouldYield => Delivery.ShouldYield;

    /// <summary>
    /// Counts a failure of the handler that a wrapper around it caught and dealt with itself (a processor-shaped API
    /// reports it to its own error handler and settles the message): the pump's
    /// <see cref="MessagePumpStatistics.HandlerFailures"/>, its metric and its log count it, as for a handler that throws
    /// to the pump. A handler that throws needs no call; call it at most once per message.
    /// </summary>
    /// <param name="exception">What the handler threw.</param>
    /// <exception cref="ArgumentNullException"><paramref name="exception"/> is null.</exception>
    public void RecordHandlerFailure(Exception exception)
    {
        ArgumentNullException.ThrowIfNull(exception);
        Delivery.HandlerFailed(exception);
    }

    /// <inheritdoc />
    public override string ToString() => $"{Message.MessageId} (delivery {Message.DeliveryCount}, {LeaseState})";

    /// <summary>
    /// Completes the message now, in the lease lane; the pump will not settle it again when the handler returns. For
    /// handlers that settle explicitly (a processor-shaped API); a handler that simply returns gets the same.
    /// </summary>
    /// <returns><see langword="true"/> when the message was completed; <see langword="false"/> when it was already settled or its lease is lost (see <see cref="LeaseState"/>).</returns>
    public Task<bool> CompleteAsync() => Delivery.SettleAsync(MessageSettlement.Complete);

    /// <summary>
    /// Abandons the message now, in the lease lane: the broker makes it visible again for another delivery; the pump
    /// will not settle it again when the handler returns.
    /// </summary>
    /// <returns><see langword="true"/> when the message was abandoned; <see langword="false"/> when it was already settled or its lease is lost (see <see cref="LeaseState"/>).</returns>
    public Task<bool> AbandonAsync() => Delivery.SettleAsync(MessageSettlement.Abandon());

    /// <summary>
    /// Dead-letters the message now, in the lease lane; the pump will not complete or abandon it afterwards.
    /// </summary>
    /// <param name="reason">Why the message cannot be processed.</param>
    /// <returns><see langword="true"/> when the message was dead-lettered; <see langword="false"/> when it was already settled or its lease is lost.</returns>
    /// <exception cref="ArgumentException"><paramref name="reason"/> is null, empty or white space.</exception>
    public Task<bool> DeadLetterAsync(string reason) => DeadLetterAsync(reason, description: null);

    /// <summary>
    /// Dead-letters the message now with a reason and a description, in the lease lane; the pump will not complete or
    /// abandon it afterwards. The description travels where the transport carries one (Service Bus:
    /// <c>DeadLetterErrorDescription</c>; see <see cref="ILeasedMessage.DeadLetterAsync(string, string, CancellationToken)"/>).
    /// </summary>
    /// <param name="reason">Why the message cannot be processed.</param>
    /// <param name="description">More detail; <see langword="null"/> for none.</param>
    /// <returns><see langword="true"/> when the message was dead-lettered; <see langword="false"/> when it was already settled or its lease is lost.</returns>
    /// <exception cref="ArgumentException"><paramref name="reason"/> is null, empty or white space.</exception>
    public Task<bool> DeadLetterAsync(string reason, string? description)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return Delivery.SettleAsync(MessageSettlement.DeadLetter(reason, description));
    }

    /// <summary>
    /// Settles the message now as <paramref name="settlement"/> says, in the lease lane, under the same single claim as
    /// <see cref="CompleteAsync"/> and its siblings; the pump will not settle it again when the handler returns. The way
    /// to a transport's own settlement: a defer, or one with <see cref="MessageSettlement.TransportData"/> (Service Bus:
    /// <c>propertiesToModify</c>), which only an <see cref="ISettleableMessage"/> carries.
    /// </summary>
    /// <param name="settlement">How to settle.</param>
    /// <returns><see langword="true"/> when the message was settled; <see langword="false"/> when it was already settled or its lease is lost (see <see cref="LeaseState"/>).</returns>
    /// <exception cref="ArgumentNullException"><paramref name="settlement"/> is null.</exception>
    /// <remarks>
    /// A settlement the transport refuses for good (a defer it does not have, transport data it does not take) is not
    /// retried: it is counted in <see cref="MessagePumpStatistics.SettleFailures"/>, logged, and the task returns
    /// <see langword="false"/>, as for any other refusal.
    /// </remarks>
    public Task<bool> SettleAsync(MessageSettlement settlement)
    {
        ArgumentNullException.ThrowIfNull(settlement);
        return Delivery.SettleAsync(settlement);
    }
}
