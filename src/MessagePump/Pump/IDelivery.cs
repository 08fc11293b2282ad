namespace PriorityAsync.MessagePump;

/// <summary>
/// What a <see cref="MessageContext"/> shows a handler, and where its settle calls go: a pump's
/// <see cref="PumpDelivery"/>, or a <see cref="DetachedDelivery"/> made by <see cref="MessagePumpModelFactory.MessageContext"/>
/// for a handler's unit test.
/// </summary>
internal interface IDelivery
{
    /// <summary>Gets the message.</summary>
    ILeasedMessage Message { get; }

    /// <summary>Gets the state of the message's lease.</summary>
    MessageLeaseState LeaseState { get; }

    /// <summary>Gets how many times the pump has renewed this delivery's lease.</summary>
    int RenewalCount { get; }

    /// <summary>Gets the handler's token: canceled when the lease is lost or the pump stops without waiting any longer.</summary>
    CancellationToken CancellationToken { get; }

    /// <summary>Gets the clock the handler's delays and timeouts use.</summary>
    TimeProvider TimeProvider { get; }

    /// <summary>Gets whether more urgent work (a lease renewal) is waiting.</summary>
    bool ShouldYield { get; }

    /// <summary>Claims the one settlement of this delivery and settles it as <paramref name="settlement"/>.</summary>
    /// <returns><see langword="true"/> when this call settled the message; <see langword="false"/> when it was already settled or its lease is lost.</returns>
    Task<bool> SettleAsync(MessageSettlement settlement);

    /// <summary>
    /// Counts a failure of the handler that a wrapper caught and reported itself (a processor's error handler), the
    /// message settled by that wrapper: the pump's <see cref="MessagePumpStatistics.HandlerFailures"/> and its log, as
    /// for a handler that throws to the pump.
    /// </summary>
    void HandlerFailed(Exception failure);
}
