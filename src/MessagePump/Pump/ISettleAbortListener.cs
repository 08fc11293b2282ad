namespace PriorityAsync.MessagePump;

/// <summary>
/// Told when the stop path aborts a message's settlement (see <see cref="PumpDelivery.AbortSettlement"/>): a pending
/// batched completion listens this way instead of through a registration on a cancellation token per message.
/// </summary>
internal interface ISettleAbortListener
{
    /// <summary>The settlement was aborted; <paramref name="token"/> is the message's canceled abort token.</summary>
    void OnSettleAbort(CancellationToken token);
}
