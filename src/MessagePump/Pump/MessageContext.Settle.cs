namespace PriorityAsync.MessagePump;

public sealed partial class MessageContext
{
    /// <summary>
    /// Completes the message now, in the lease lane; the pump will not settle it again when the handler returns. For
    /// handlers that settle explicitly (a processor-shaped API); a handler that simply returns gets the same.
    /// </summary>
    /// <returns><see langword="true"/> when the message was completed; <see langword="false"/> when it was already settled or its lease is lost (see <see cref="LeaseState"/>).</returns>
    public Task<bool> CompleteAsync() => SettleAsync(Settlement.Complete, reason: null, description: null);

    /// <summary>
    /// Abandons the message now, in the lease lane: the broker makes it visible again for another delivery; the pump
    /// will not settle it again when the handler returns.
    /// </summary>
    /// <returns><see langword="true"/> when the message was abandoned; <see langword="false"/> when it was already settled or its lease is lost (see <see cref="LeaseState"/>).</returns>
    public Task<bool> AbandonAsync() => SettleAsync(Settlement.Abandon, reason: null, description: null);

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
        return SettleAsync(Settlement.DeadLetter, reason, description);
    }

    /// <summary>
    /// Settles the message now as <paramref name="settlement"/> (a transport's own kind, such as
    /// <see cref="Settlement.Defer"/>, or a dead-letter without a reason), in the lease lane, as <see cref="CompleteAsync"/> does.
    /// </summary>
    /// <returns><see langword="true"/> when the message was settled; <see langword="false"/> when it was already settled or its lease is lost.</returns>
    internal Task<bool> SettleAsync(Settlement settlement, string? reason, string? description)
    {
        if (_owner is not PriorityMessagePump pump)
        {
            return SettleDetachedAsync(settlement, reason, description);
        }

        return pump.LeaseLane.Run(() => pump.SettleAsync(this, settlement, reason, description));
    }

    /// <summary>
    /// The settle calls of a context made by <see cref="MessagePumpModelFactory.MessageContext"/>: the first one claims
    /// the message and settles it through the message's own call, in the caller's context; later ones return
    /// <see langword="false"/>, as with a pump.
    /// </summary>
    private async Task<bool> SettleDetachedAsync(Settlement settlement, string? reason, string? description)
    {
        if (settlement == Settlement.Defer)
        {
            throw new NotSupportedException("A context made by MessagePumpModelFactory settles through ILeasedMessage, which has no defer.");
        }

        if (!TryClaim())
        {
            return false;
        }

        try
        {
            await (settlement switch
            {
                Settlement.Complete => Message.CompleteAsync(CancellationToken.None),
                Settlement.Abandon => Message.AbandonAsync(CancellationToken.None),
                _ => Message.DeadLetterAsync(reason ?? "DeadLettered", description, CancellationToken.None),
            });
            return true;
        }
        catch (LeaseLostException)
        {
            return false;
        }
        finally
        {
            EndSettlement();
        }
    }

    /// <summary>
    /// A settle call made on <see cref="Message"/> itself (a pump-owned <see cref="IPumpRoutedMessage"/>): run in the
    /// lease lane through the pump's settlement, so that it is claimed once and counted as what it was; it fails as
    /// <see cref="ILeasedMessage"/>'s calls do (<see cref="LeaseLostException"/> when the message was already settled or
    /// its lease is lost). <paramref name="cancellationToken"/> is checked before the call; a settlement under way ends
    /// as the pump's own do (when the broker answers, or at the lock's expiry when the pump stops).
    /// </summary>
    internal Task SettleForMessageAsync(Settlement settlement, string? reason, string? description, CancellationToken cancellationToken) =>
        cancellationToken.IsCancellationRequested
            ? Task.FromCanceled(cancellationToken)
            : Pump.LeaseLane.Run(() => Pump.SettleForMessageAsync(this, settlement, reason, description));
}
