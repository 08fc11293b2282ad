namespace PriorityAsync.MessagePump;

/// <summary>
/// A leased message that a transport settles by value (<see cref="MessageSettlement"/>), and whose public settle calls
/// go through the pump that owns its delivery: the contract every shipped transport implements, public so that a
/// transport written elsewhere can do all a shipped one does (defer, a transport's own data, an outcome the broker
/// cannot confirm, a handler's settle call counted once).
/// </summary>
/// <remarks>
/// <para>
/// A <see cref="PriorityMessagePump"/> calls <see cref="RouteSettlementsThrough"/> when it takes the delivery, before any
/// handler sees the message; from then on the message's public settle calls (<see cref="ILeasedMessage.CompleteAsync"/>,
/// <see cref="ILeasedMessage.AbandonAsync"/>, <see cref="ILeasedMessage.DeadLetterAsync(string, CancellationToken)"/> and
/// the transport's own) hand their <see cref="MessageSettlement"/> to the owner, which claims the settlement once,
/// settles through <see cref="SettleAsync"/>, counts it as what it was and never settles the message again. The pump
/// settles only through <see cref="SettleAsync"/>, which must therefore not go back to the owner.
/// </para>
/// <para>
/// A message no pump owns settles through <see cref="SettleAsync"/> directly. A message that implements only
/// <see cref="ILeasedMessage"/> still works with the pump: the pump calls its settle methods, and a handler's call on
/// the message itself is one the pump does not see (settle through <see cref="MessageContext"/> then).
/// </para>
/// </remarks>
public interface ISettleableMessage : ILeasedMessage
{
    /// <summary>The transport's settle call: sends <paramref name="settlement"/> to the broker, whoever owns the delivery.</summary>
    /// <param name="settlement">How to settle.</param>
    /// <param name="cancellationToken">Cancels the call (a pump cancels it when the lock expired with the call unanswered during its stop).</param>
    /// <returns>The broker's outcome, once it has answered.</returns>
    /// <exception cref="LeaseLostException">The lease expired or the message was already settled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    /// <exception cref="NotSupportedException">The transport has no such settlement (<see cref="SettlementKind.Defer"/> on most).</exception>
    /// <exception cref="ArgumentException"><see cref="MessageSettlement.TransportData"/> is not what this transport takes.</exception>
    Task<SettlementOutcome> SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default);

    /// <summary>
    /// Routes the message's public settle calls through <paramref name="owner"/> from now on; a pump calls it once, when
    /// it takes the delivery. Where <see cref="SettleAsync"/> is called directly, nothing changes.
    /// </summary>
    /// <param name="owner">The pump's delivery of this message.</param>
    void RouteSettlementsThrough(ISettlementOwner owner);
}
