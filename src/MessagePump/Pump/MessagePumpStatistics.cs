namespace PriorityAsync.MessagePump;

/// <summary>A snapshot of a <see cref="PriorityMessagePump"/>'s accounting, one outcome per delivery.</summary>
/// <remarks>
/// Once the pump has stopped and every handler has returned,
/// <c>Received == Completed + Abandoned + DeadLettered + Deferred + LeasesLost + SettleFailures</c>.
/// </remarks>
public sealed record MessagePumpStatistics
{
    /// <summary>Creates an empty snapshot; the pump makes them (<see cref="PriorityMessagePump.GetStatistics"/>).</summary>
    internal MessagePumpStatistics()
    {
    }

    /// <summary>Gets how many messages the pump received.</summary>
    public long Received { get; init; }

    /// <summary>Gets how many messages the pump completed.</summary>
    public long Completed { get; init; }

    /// <summary>Gets how many messages the pump abandoned (handler failures and stop).</summary>
    public long Abandoned { get; init; }

    /// <summary>Gets how many of the abandoned messages were abandoned by <see cref="PriorityMessagePump.StopAsync"/>.</summary>
    internal long AbandonedAtStop { get; init; }

    /// <summary>
    /// Gets how many messages <see cref="PriorityMessagePump.StopAsync"/> could not see settled: renewals had stopped and their
    /// settlement (the handler's complete, a dead-letter, or the stop path's own abandon) was still unanswered when
    /// their lock expired. Each is also counted in <see cref="LeasesLost"/>; the broker holds no lock for them and will
    /// deliver them again.
    /// </summary>
    public long UnsettledAtStop { get; init; }

    /// <summary>Gets how many messages handlers dead-lettered.</summary>
    public long DeadLettered { get; init; }

    /// <summary>
    /// Gets how many messages handlers deferred (Service Bus: <c>DeferMessageAsync</c>): the broker keeps them aside,
    /// to be received again by sequence number; each such delivery is counted on its own in <see cref="Received"/>.
    /// </summary>
    public long Deferred { get; init; }

    /// <summary>
    /// Gets how many settlements the broker accepted without being able to confirm them
    /// (<see cref="SettlementOutcome.Unconfirmed"/>: Amazon SQS's delete with a receipt handle that may be out of date).
    /// Each is also counted as its kind (<see cref="Completed"/>, ...): the pump did settle it, and the broker may deliver
    /// the message again.
    /// </summary>
    public long UnconfirmedSettlements { get; init; }

    /// <summary>
    /// Gets how many leases were lost (renewal or settlement found the lock gone, retries ran out of lock time, or a
    /// settlement was still unanswered at its lock's expiry during <see cref="PriorityMessagePump.StopAsync"/>).
    /// </summary>
    public long LeasesLost { get; init; }

    /// <summary>Gets how many settle calls failed with an error that is neither transient nor a lost lease.</summary>
    public long SettleFailures { get; init; }

    /// <summary>Gets how many receive calls failed (each logged, then retried after <see cref="MessagePumpOptions.EmptyReceiveDelay"/>).</summary>
    public long ReceiveFailures { get; init; }

    /// <summary>
    /// Gets when the receive calls began to fail, every one since (the broker unreachable, the entity gone, rights
    /// missing); <see langword="null"/> while receives are answered. The lease health check reads it.
    /// </summary>
    public DateTimeOffset? ReceiveFailingSince { get; init; }

    /// <summary>Gets how many handlers threw.</summary>
    public long HandlerFailures { get; init; }

    /// <summary>Gets how many renewals succeeded.</summary>
    public long Renewals { get; init; }

    /// <summary>
    /// Gets how many messages lost their lease before they reached their handler (received with too little lock left,
    /// or held back behind other work past it): their handler is not called, and each is counted in
    /// <see cref="LeasesLost"/> too; the broker delivers them again.
    /// </summary>
    public long ExpiredAtHandOff { get; init; }

    /// <summary>
    /// Gets the least lock time a message had left when it reached its handler (the hand-off headroom), or
    /// <see langword="null"/> before the first. The metric <c>messagepump.lease.handoff.headroom</c> has the distribution.
    /// </summary>
    public TimeSpan? MinHandOffHeadroom { get; init; }

    /// <summary>
    /// Gets when the pump's stop began while it is under way (<see cref="PriorityMessagePump.StopAsync"/>);
    /// <see langword="null"/> before the stop and once it has ended.
    /// </summary>
    public DateTimeOffset? StoppingSince { get; init; }

    /// <summary>
    /// Gets how far the stop has run past <see cref="MessagePumpOptions.ShutdownTimeout"/>: while it is under way, so
    /// far; once it has ended, in all. <see langword="null"/> when no stop has run past its timeout. A stop runs past it
    /// when settlements at the stop (abandons of the handlers still running) are slow to be answered, or when it waits
    /// for a lock a late renewal may still hold; each is bounded by the lock's expiry. The lease health check reads it.
    /// </summary>
    public TimeSpan? StopOverrun { get; init; }

    /// <summary>
    /// Gets how many handlers the stop gave up on (it canceled their token and abandoned their messages at
    /// <see cref="MessagePumpOptions.ShutdownTimeout"/>) still running now: they ignore their token, and the broker may
    /// already deliver their messages again. The lease health check reads it.
    /// </summary>
    public int HandlersRunningAfterStop { get; init; }

    /// <summary>Gets how many renew or settle calls failed transiently and were retried.</summary>
    internal long TransientRetries { get; init; }

    /// <summary>
    /// Gets how many messages are in flight now: received and not yet settled or given up. Zero once
    /// <see cref="PriorityMessagePump.StopAsync"/> has returned, even while a handler that ignores its token still runs.
    /// </summary>
    public int InFlight { get; init; }

    /// <summary>Gets the largest number of messages that were in flight at once.</summary>
    internal int PeakInFlight { get; init; }
}
