namespace PriorityAsync.MessagePump;

public sealed partial class LeaseKeeper
{
    /// <summary>
    /// Marks a renew call of <paramref name="lease"/> sent at <paramref name="sent"/> (a timestamp) and, while fewer
    /// than <see cref="MaxRenewalsInFlight"/> are under way, schedules the lease's next renewal before this one is
    /// answered. Where the source knows its lock duration, the call, once it reaches the broker, moves the lock to at
    /// least <c>now + LockDuration</c>, so the next renewal falls due one <see cref="PipelineSpacing"/> from now
    /// whatever the answer's delay: an answer that waits (for a thread of a starved pool) never holds the next request
    /// back. Otherwise the next renewal is a hedge, due when half of the lock time known left now has passed (at most
    /// 10 s before the known expiry), and only if it could still reach the broker in time. A renewal answered in time
    /// takes the lease out of that slot again (<see cref="RenewalAnswered"/>). Call under the lock by the keeper, which
    /// wakes by itself for it; returns whether this call is itself a hedged renewal (sent while another is under way).
    /// </summary>
    private bool BeginRenewalLocked(LeaseHandle lease, long sent, long nowTicks)
    {
        var hedge = lease.RenewalsInFlight > 0;
        lease.RenewalsInFlight++;
        lease.LastRenewalSent = sent;
        if (lease.RenewalsInFlight >= MaxRenewalsInFlight || !lease.IsRenewable || _keeperStopping)
        {
            return hedge;
        }

        if (PipelineSpacing(lease.Source) is { } spacing)
        {
            ScheduleAtLocked(lease, nowTicks + spacing.Ticks);
            return hedge;
        }

        var remaining = lease.Message.LockedUntil.UtcTicks - nowTicks;
        var wait = remaining - Math.Min(remaining / 2, MaxDefaultRenewalBuffer.Ticks);
        if (remaining <= 0 || remaining - wait <= _renewRoundTrips.WorstRequestLeg.Ticks)
        {
            return hedge; // the hedge could not reach the broker before the known expiry: no use sending it
        }

        ScheduleAtLocked(lease, nowTicks + wait);
        return hedge;
    }

    /// <summary>
    /// How long after sending a renewal the next one falls due, while answers are outstanding; <see langword="null"/>
    /// when the source does not know its lock duration. A renewal sent at <c>t</c> is handled by the broker before
    /// <c>t + w</c> (w: the worst request leg observed) and moves the lock to at least <c>t + LockDuration</c>; the next
    /// one, sent a spacing later, reaches the broker before that as long as the spacing is below
    /// <c>LockDuration - w</c>. The spacing is the lock less the renewal buffer (the option as set, or min(half the lock,
    /// 10 s): at least half the lock, the renewal budget of two renewals per lock duration; at least
    /// <see cref="RenewRoundTrips.SafetyFactor"/> request legs either way), and at least half of
    /// <c>LockDuration - w</c>, and never below a <see cref="MaxRenewalsInFlight"/>th of the lock, which bounds the
    /// calls a lease can have under way.
    /// </summary>
    private TimeSpan? PipelineSpacing(IMessageSource? source)
    {
        if (source?.LockDuration is not { } lockDuration || lockDuration <= TimeSpan.Zero)
        {
            return null;
        }

        var lockTicks = lockDuration.Ticks;
        var leg = _renewRoundTrips.WorstRequestLeg.Ticks;
        var rule = _options.LockRenewalBuffer?.Ticks ?? Math.Min(lockTicks / 2, MaxDefaultRenewalBuffer.Ticks);
        var buffer = Math.Max(rule, RenewRoundTrips.SafetyFactor * leg);
        return TimeSpan.FromTicks(Math.Max(Math.Max(lockTicks - buffer, (lockTicks - leg) / 2), lockTicks / MaxRenewalsInFlight));
    }

    /// <summary>Puts <paramref name="lease"/> in the schedule due at <paramref name="dueTicks"/> (UTC), without a batching window. Call under the lock.</summary>
    private void ScheduleAtLocked(LeaseHandle lease, long dueTicks)
    {
        lease.RenewDueTicks = dueTicks;
        lease.RenewEarliestTicks = dueTicks;
        _schedule.Add(lease);
    }

    /// <summary>
    /// A renew call sent at <paramref name="sent"/> failed transiently (or was answered wrongly) and goes on under the
    /// retry rule, which owns the lease until it ends: its hedged renewal, if still scheduled, is dropped. A lease
    /// scheduled by another renewal's answer keeps that schedule.
    /// </summary>
    private void DropHedge(LeaseHandle lease, long sent)
    {
        lock (_gate)
        {
            if (lease.RenewalsInFlight == 1 && lease.LastRenewalSent == sent)
            {
                _schedule.Remove(lease);
            }
        }
    }

    /// <summary>
    /// A renew call of <paramref name="lease"/> answered "renewed": one call fewer under way. When none is left, the
    /// lease is scheduled by the rule from its (possibly newer) expiry, in place of its next renewal. While others are
    /// still under way and the source knows its lock duration, the answer is older news than the renewals sent since:
    /// the lease keeps its next renewal one <see cref="PipelineSpacing"/> after the newest (scheduled again if the cap
    /// on calls under way had left it out).
    /// </summary>
    private void RenewalAnswered(LeaseHandle lease)
    {
        TaskCompletionSource? wake;
        lock (_gate)
        {
            lease.RenewalsInFlight--;
            if (lease.RenewalsInFlight > 0 && PipelineSpacing(lease.Source) is { } spacing)
            {
                wake = lease.IsScheduled || !lease.IsRenewable || _keeperStopping
                    ? null
                    : ScheduleNextLocked(lease, (LastRenewalSentAt(lease) + spacing).UtcTicks);
            }
            else
            {
                _schedule.Remove(lease);
                wake = ScheduleLocked(lease);
            }
        }

        wake?.TrySetResult();
    }

    /// <summary>
    /// A renew call of <paramref name="lease"/> sent at <paramref name="sent"/> answered "lost" (or gave up for lack of
    /// lock time). The lease is lost unless the answer is stale: a newer renewal of it was sent after this one and the
    /// known expiry has not passed — that newer renewal decides (it has either renewed the lease already, or will
    /// answer itself). See docs/message-pump.md, "Hedged renewals".
    /// </summary>
    private void RenewalLost(LeaseHandle lease, Exception? failure, long sent)
    {
        TaskCompletionSource? wake = null;
        var stale = false;
        lock (_gate)
        {
            lease.RenewalsInFlight--;
            if (lease.LastRenewalSent > sent && lease.Message.LockedUntil > TimeProvider.GetUtcNow())
            {
                // Stale: the newer renewal decides. Had it answered already, it scheduled the lease; make sure it is.
                wake = lease.RenewalsInFlight == 0 ? ScheduleLocked(lease) : null;
                stale = true;
            }
            else
            {
                _schedule.Remove(lease);
            }
        }

        if (stale)
        {
            wake?.TrySetResult();
            return;
        }

        LeaseLostByKeeper(lease, failure);
    }

    /// <summary>
    /// The latest the broker may hold the lease's lock: its known expiry, or, while renewals of it are unanswered and the
    /// source knows its lock duration, the newest renewal's send time plus the worst request leg plus the lock duration,
    /// when that is later (the renewal may have reached the broker and moved the lock before its answer comes back).
    /// </summary>
    internal DateTimeOffset LatestExpiry(LeaseHandle lease)
    {
        var known = lease.Message.LockedUntil;
        lock (_gate)
        {
            if (lease.RenewalsInFlight == 0 || lease.Source?.LockDuration is not { } lockDuration)
            {
                return known;
            }

            var handledBy = LastRenewalSentAt(lease) + _renewRoundTrips.WorstRequestLeg;
            return handledBy + lockDuration > known ? handledBy + lockDuration : known;
        }
    }

    /// <summary>When (on the keeper's clock) the newest renewal of <paramref name="lease"/> was sent. Call under the lock.</summary>
    private DateTimeOffset LastRenewalSentAt(LeaseHandle lease) =>
        TimeProvider.GetUtcNow() - TimeProvider.GetElapsedTime(lease.LastRenewalSent);

    /// <summary>Whether another renewal of <paramref name="lease"/> is under way or was sent after the one sent at <paramref name="sent"/>.</summary>
    private bool HasSiblingRenewal(LeaseHandle lease, long sent)
    {
        lock (_gate)
        {
            return lease.RenewalsInFlight > 1 || lease.LastRenewalSent > sent;
        }
    }

    /// <summary>
    /// How long a renewal sent at <paramref name="sentAt"/> and answered with <paramref name="lockedUntil"/> took to reach
    /// the broker, which extends the lock by its duration from the moment it handles the renewal: known when the source
    /// knows its <see cref="IMessageSource.LockDuration"/> (a broker clock ahead of ours makes it look longer), otherwise
    /// taken as the whole round trip.
    /// </summary>
    private static TimeSpan RequestLeg(IMessageSource? source, DateTimeOffset lockedUntil, DateTimeOffset sentAt, TimeSpan roundTrip) =>
        source?.LockDuration is { } lockDuration
            ? TimeSpan.FromTicks(Math.Clamp((lockedUntil - lockDuration - sentAt).Ticks, 0, Math.Max(0, roundTrip.Ticks)))
            : roundTrip;
}
