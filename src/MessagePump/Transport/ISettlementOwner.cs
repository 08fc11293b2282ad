namespace PriorityAsync.MessagePump;

/// <summary>
/// The pump's delivery of an <see cref="ISettleableMessage"/>, to which the message hands its public settle calls once
/// <see cref="ISettleableMessage.RouteSettlementsThrough"/> was called.
/// </summary>
public interface ISettlementOwner
{
    /// <summary>
    /// Settles the message through the pump: claimed once (a settlement already claimed, by the handler or the pump,
    /// fails), run in the pump's lease lane with its retries, counted as what it was, and never settled again when the
    /// handler returns.
    /// </summary>
    /// <param name="settlement">How to settle.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers, or at the lock's expiry when the pump stops.</param>
    /// <returns>A task that completes when the message is settled.</returns>
    /// <exception cref="LeaseLostException">The message was already settled, or its lease is lost.</exception>
    /// <exception cref="Exception">The broker refused the settlement for good: its own exception.</exception>
    Task SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default);
}
