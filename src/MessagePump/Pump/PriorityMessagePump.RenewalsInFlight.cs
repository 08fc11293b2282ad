namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>
    /// Marks a renew call of <paramref name="context"/> sent at <paramref name="sent"/> (a timestamp) and, while fewer
    /// than <see cref="MaxRenewalsInFlight"/> are under way, schedules its hedged renewal: due when half of the lock
    /// time left now has passed (at most 10 s before the known expiry) — the default rule computed from the last known
    /// expiry, without the round-trip floor, which would send the hedge at once to arrive with the first. A renewal
    /// answered in time takes the lease out of that slot again (<see cref="RenewalAnswered"/>). Call under the lock by
    /// the keeper, which wakes by itself for the hedge; returns whether this call is itself a hedged renewal.
    /// </summary>
    private bool BeginRenewalLocked(MessageContext context, long sent, long nowTicks)
    {
        var hedge = context.RenewalsInFlight > 0;
        context.RenewalsInFlight++;
        context.LastRenewalSent = sent;
        var remaining = context.Message.LockedUntil.UtcTicks - nowTicks;
        if (context.RenewalsInFlight >= MaxRenewalsInFlight || remaining <= 0 || !context.IsRenewable || _keeperStopping)
        {
            return hedge;
        }

        var wait = remaining - Math.Min(remaining / 2, MaxDefaultRenewalBuffer.Ticks);
        if (remaining - wait <= _renewRoundTrips.WorstRequestLeg.Ticks)
        {
            return hedge; // the hedge could not reach the broker before the known expiry: no use sending it
        }

        context.RenewDueTicks = nowTicks + wait;
        context.RenewEarliestTicks = context.RenewDueTicks;
        _schedule.Add(context);
        return hedge;
    }

    /// <summary>
    /// A renew call sent at <paramref name="sent"/> failed transiently (or was answered wrongly) and goes on under the
    /// retry rule, which owns the lease until it ends: its hedged renewal, if still scheduled, is dropped. A lease
    /// scheduled by another renewal's answer keeps that schedule.
    /// </summary>
    private void DropHedge(MessageContext context, long sent)
    {
        lock (_gate)
        {
            if (context.RenewalsInFlight == 1 && context.LastRenewalSent == sent)
            {
                _schedule.Remove(context);
            }
        }
    }

    /// <summary>
    /// A renew call of <paramref name="context"/> answered "renewed": one call fewer under way, and the lease scheduled
    /// by the rule from its (possibly newer) expiry, in place of its hedged renewal.
    /// </summary>
    private void RenewalAnswered(MessageContext context)
    {
        TaskCompletionSource? wake;
        lock (_gate)
        {
            context.RenewalsInFlight--;
            _schedule.Remove(context);
            wake = ScheduleLocked(context);
        }

        wake?.TrySetResult();
    }

    /// <summary>
    /// A renew call of <paramref name="context"/> sent at <paramref name="sent"/> answered "lost" (or gave up for lack of
    /// lock time). The lease is lost unless the answer is stale: a newer renewal of it was sent after this one and the
    /// known expiry has not passed — that newer renewal decides (it has either renewed the lease already, or will
    /// answer itself). See docs/message-pump.md, "Hedged renewals".
    /// </summary>
    private void RenewalLost(MessageContext context, Exception? failure, long sent)
    {
        TaskCompletionSource? wake = null;
        var stale = false;
        lock (_gate)
        {
            context.RenewalsInFlight--;
            if (context.LastRenewalSent > sent && context.Message.LockedUntil > TimeProvider.GetUtcNow())
            {
                // Stale: the newer renewal decides. Had it answered already, it scheduled the lease; make sure it is.
                wake = context.RenewalsInFlight == 0 ? ScheduleLocked(context) : null;
                stale = true;
            }
            else
            {
                _schedule.Remove(context);
            }
        }

        if (stale)
        {
            wake?.TrySetResult();
            return;
        }

        OnLeaseLost(context, failure, "renew", byLeaseKeeper: true);
    }

    /// <summary>Whether another renewal of <paramref name="context"/> is under way or was sent after the one sent at <paramref name="sent"/>.</summary>
    private bool HasSiblingRenewal(MessageContext context, long sent)
    {
        lock (_gate)
        {
            return context.RenewalsInFlight > 1 || context.LastRenewalSent > sent;
        }
    }

    /// <summary>
    /// How long a renewal sent at <paramref name="sentAt"/> and answered with <paramref name="lockedUntil"/> took to reach
    /// the broker, which extends the lock by its duration from the moment it handles the renewal: known when the source
    /// knows its <see cref="IMessageSource.LockDuration"/> (a broker clock ahead of ours makes it look longer), otherwise
    /// taken as the whole round trip.
    /// </summary>
    private TimeSpan RequestLeg(DateTimeOffset lockedUntil, DateTimeOffset sentAt, TimeSpan roundTrip) =>
        _source.LockDuration is { } lockDuration
            ? TimeSpan.FromTicks(Math.Clamp((lockedUntil - lockDuration - sentAt).Ticks, 0, Math.Max(0, roundTrip.Ticks)))
            : roundTrip;
}
