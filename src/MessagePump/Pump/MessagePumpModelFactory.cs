namespace PriorityAsync.MessagePump;

/// <summary>
/// Makes the pump's model types without a pump, for unit tests of a handler (as the Azure SDK's
/// <c>ServiceBusModelFactory</c> does for its own types).
/// </summary>
public static class MessagePumpModelFactory
{
    /// <summary>
    /// Makes the <see cref="PriorityAsync.MessagePump.MessageContext"/> a handler would get with
    /// <paramref name="message"/>, without a pump: nothing renews the message's lock and nothing settles it when the
    /// handler returns. The context's first settle call (<see cref="MessageContext.CompleteAsync"/>,
    /// <see cref="MessageContext.AbandonAsync"/>, <see cref="MessageContext.DeadLetterAsync(string, string?)"/>)
    /// settles the message through its own <see cref="ILeasedMessage"/> call, in the caller's context, and returns
    /// <see langword="true"/> (<see langword="false"/> when the message answers <see cref="LeaseLostException"/>); any
    /// later one returns <see langword="false"/>, as with a pump. <see cref="MessageContext.LeaseState"/> is
    /// <see cref="MessageLeaseState.Held"/>, then <see cref="MessageLeaseState.SettlementClaimed"/> from the first
    /// settle call; it is never <see cref="MessageLeaseState.Lost"/>, and <see cref="MessageContext.RenewalCount"/> is 0.
    /// </summary>
    /// <param name="message">The message the handler gets: a fake of your own, or one received from a test transport.</param>
    /// <param name="scheduler">The scheduler whose <see cref="PriorityScheduler.ShouldYield"/> the context's <see cref="MessageContext.ShouldYield"/> reports; <see langword="null"/> for none (always <see langword="false"/>).</param>
    /// <param name="timeProvider">The clock the context reports (<see cref="MessageContext.TimeProvider"/>); <see langword="null"/> for the scheduler's, or <see cref="TimeProvider.System"/> without one.</param>
    /// <param name="cancellationToken">Cancels <see cref="MessageContext.CancellationToken"/> when it is canceled: a test's way to act a lost lease or a stop.</param>
    /// <returns>A context that no pump owns.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is <see langword="null"/>.</exception>
    public static MessageContext MessageContext(
        ILeasedMessage message,
        PriorityScheduler? scheduler = null,
        TimeProvider? timeProvider = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(message);
        return new MessageContext(new DetachedDelivery(message, scheduler, timeProvider ?? scheduler?.TimeProvider ?? TimeProvider.System, cancellationToken));
    }
}
