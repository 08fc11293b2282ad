namespace PriorityAsync.MessagePump;

/// <summary>
/// A leased message of a shipped transport whose public settle calls (<see cref="ILeasedMessage.CompleteAsync"/>,
/// <see cref="ILeasedMessage.AbandonAsync"/>, <see cref="ILeasedMessage.DeadLetterAsync(string, CancellationToken)"/>
/// and the transport's own overloads), once a <see cref="PriorityMessagePump"/> owns the delivery, go through the
/// pump's settlement (<see cref="PumpDelivery.SettleForMessageAsync"/>): claimed once, counted as what it was, a lost
/// lease counted and logged, and never settled again by the pump when the handler returns. The pump itself settles
/// through <see cref="SettleDirectAsync"/>.
/// </summary>
internal interface IPumpRoutedMessage
{
    /// <summary>
    /// Called by the pump when it takes the delivery (once, before any handler sees the message): from then on the
    /// message's public settle calls go through <paramref name="delivery"/>.
    /// </summary>
    void RouteSettlementsThrough(PumpDelivery delivery);

    /// <summary>The transport's own settle call, as the public ones make it for a message no pump owns; the pump's way to settle.</summary>
    /// <param name="settlement">How to settle.</param>
    /// <param name="reason">The dead-letter reason (with <see cref="Settlement.DeadLetter"/> only).</param>
    /// <param name="description">The dead-letter description, where the transport carries one; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the broker has settled the message; it fails as the public calls do.</returns>
    Task SettleDirectAsync(Settlement settlement, string? reason, string? description, CancellationToken cancellationToken);
}
