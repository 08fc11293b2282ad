namespace PriorityAsync.MessagePump;

public sealed partial class MessageContext
{
    /// <summary>
    /// Completes the message now, in the lease lane; the pump will not settle it again when the handler returns. For
    /// handlers that settle explicitly (a processor-shaped API); a handler that simply returns gets the same.
    /// </summary>
    /// <returns><see langword="true"/> when the message was completed; <see langword="false"/> when it was already settled or its lease is lost (see <see cref="LeaseState"/>).</returns>
    public Task<bool> CompleteAsync() => _pump.LeaseLane.Run(() => _pump.SettleAsync(this, Settlement.Complete));

    /// <summary>
    /// Abandons the message now, in the lease lane: the broker makes it visible again for another delivery; the pump
    /// will not settle it again when the handler returns.
    /// </summary>
    /// <returns><see langword="true"/> when the message was abandoned; <see langword="false"/> when it was already settled or its lease is lost (see <see cref="LeaseState"/>).</returns>
    public Task<bool> AbandonAsync() => _pump.LeaseLane.Run(() => _pump.SettleAsync(this, Settlement.Abandon));
}
