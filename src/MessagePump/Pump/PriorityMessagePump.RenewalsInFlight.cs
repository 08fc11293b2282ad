namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>
    /// Marks a renew call of <paramref name="context"/> sent at <paramref name="sent"/> (a timestamp) and, while fewer
    /// than <see cref="MaxRenewalsInFlight"/> are under way, schedules the lease's next renewal before this one is
    /// answered. Where the source knows its lock duration, the call, once it reaches the broker, moves the lock to at
    /// least <c>now + LockDuration</c>, so the next renewal falls due one <see cref="PipelineSpacing"/> from now
    /// whatever the answer's delay: an answer that waits (for a thread of a starved pool) never holds the next request
    /// back. Otherwise the next renewal is a hedge, due when half of the lock time known left now has passed (at most
    /// 10 s before the known expiry), and only if it could still reach the broker in time. A renewal answered in time
    /// takes the lease out of that slot again (<see cref="RenewalAnswered"/>). Call under the lock by the keeper, which
    /// wakes by itself for it; returns whether this call is itself a hedged renewal (sent while another is under way).
    /// </summary>
    private bool BeginRenewalLocked(MessageContext context, long sent, long nowTicks)
    {
        var hedge = context.RenewalsInFlight > 0;
        context.RenewalsInFlight++;
        context.LastRenewalSent = sent;
        if (context.RenewalsInFlight >= MaxRenewalsInFlight || !context.IsRenewable || _keeperStopping)
        {
            return hedge;
        }

        if (PipelineSpacing() is { } spacing)
        {
            ScheduleAtLocked(context, nowTicks + spacing.Ticks);
            return hedge;
        }

        var remaining = context.Message.LockedUntil.UtcTicks - nowTicks;
        var wait = remaining - Math.Min(remaining / 2, MaxDefaultRenewalBuffer.Ticks);
        if (remaining <= 0 || remaining - wait <= _renewRoundTrips.WorstRequestLeg.Ticks)
        {
            return hedge; // the hedge could not reach the broker before the known expiry: no use sending it
        }

        ScheduleAtLocked(context, nowTicks + wait);
        return hedge;
    }

    /// <summary>
    /// How long after sending a renewal the next one falls due, while answers are outstanding; <see langword="null"/>
    /// when the source does not know its lock duration. A renewal sent at <c>t</c> is handled by the broker before
    /// <c>t + w</c> (w: the worst request leg observed) and moves the lock to at least <c>t + LockDuration</c>; the next
    /// one, sent a spacing later, reaches the broker before that as long as the spacing is below
    /// <c>LockDuration - w</c>. The spacing is the lock less the renewal buffer (the option, or min(half the lock,
    /// 10 s), at least <see cref="RenewRoundTrips.SafetyFactor"/> request legs), at least half of
    /// <c>LockDuration - w</c>, and never below a <see cref="MaxRenewalsInFlight"/>th of the lock, which bounds the
    /// calls a lease can have under way.
    /// </summary>
    private TimeSpan? PipelineSpacing()
    {
        if (_source.LockDuration is not { } lockDuration || lockDuration <= TimeSpan.Zero)
        {
            return null;
        }

        var lockTicks = lockDuration.Ticks;
        var leg = _renewRoundTrips.WorstRequestLeg.Ticks;
        var rule = _options.LockRenewalBuffer?.Ticks ?? Math.Min(lockTicks / 2, MaxDefaultRenewalBuffer.Ticks);
        var buffer = Math.Max(rule, RenewRoundTrips.SafetyFactor * leg);
        return TimeSpan.FromTicks(Math.Max(Math.Max(lockTicks - buffer, (lockTicks - leg) / 2), lockTicks / MaxRenewalsInFlight));
    }

    /// <summary>Puts <paramref name="context"/> in the schedule due at <paramref name="dueTicks"/> (UTC), without a batching window. Call under the lock.</summary>
    private void ScheduleAtLocked(MessageContext context, long dueTicks)
    {
        context.RenewDueTicks = dueTicks;
        context.RenewEarliestTicks = dueTicks;
        _schedule.Add(context);
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
    /// A renew call of <paramref name="context"/> answered "renewed": one call fewer under way. When none is left, the
    /// lease is scheduled by the rule from its (possibly newer) expiry, in place of its next renewal. While others are
    /// still under way and the source knows its lock duration, the answer is older news than the renewals sent since:
    /// the lease keeps its next renewal one <see cref="PipelineSpacing"/> after the newest (scheduled again if the cap
    /// on calls under way had left it out).
    /// </summary>
    private void RenewalAnswered(MessageContext context)
    {
        TaskCompletionSource? wake;
        lock (_gate)
        {
            context.RenewalsInFlight--;
            if (context.RenewalsInFlight > 0 && PipelineSpacing() is { } spacing)
            {
                wake = context.IsScheduled || !context.IsRenewable || _keeperStopping
                    ? null
                    : ScheduleNextLocked(context, (LastRenewalSentAt(context) + spacing).UtcTicks);
            }
            else
            {
                _schedule.Remove(context);
                wake = ScheduleLocked(context);
            }
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

    /// <summary>
    /// The latest the broker may hold the lease's lock: its known expiry, or, while renewals of it are unanswered and the
    /// source knows its lock duration, the newest renewal's send time plus the worst request leg plus the lock duration,
    /// when that is later (the renewal may have reached the broker and moved the lock before its answer comes back).
    /// </summary>
    private DateTimeOffset LatestExpiry(MessageContext context)
    {
        var known = context.Message.LockedUntil;
        lock (_gate)
        {
            if (context.RenewalsInFlight == 0 || _source.LockDuration is not { } lockDuration)
            {
                return known;
            }

            var handledBy = LastRenewalSentAt(context) + _renewRoundTrips.WorstRequestLeg;
            return handledBy + lockDuration > known ? handledBy + lockDuration : known;
        }
    }

    /// <summary>When (on the pump's clock) the newest renewal of <paramref name="context"/> was sent. Call under the lock.</summary>
    private DateTimeOffset LastRenewalSentAt(MessageContext context) =>
        TimeProvider.GetUtcNow() - TimeProvider.GetElapsedTime(context.LastRenewalSent);

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
