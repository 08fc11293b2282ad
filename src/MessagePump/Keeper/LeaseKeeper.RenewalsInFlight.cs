namespace PriorityAsync.MessagePump;

public sealed partial class LeaseKeeper
{
    /// <summary>
    /// Marks a renew call of <paramref name="lease"/> sent at <paramref name="sent"/> (a timestamp) and, when it is the
    /// only one under way, schedules a hedge: a second renewal sent only if this one's answer is later than the round
    /// trips observed — twice the worst of the last 32, and at least half the lock time left now — and only once a round
    /// trip has been observed and the hedge could still reach the broker before the known expiry. A renewal answered in time takes the lease out of that slot
    /// (<see cref="RenewalAnswered"/>), so a broker that answers in time never sees a second call, and one renewal is
    /// under way per lease otherwise. Call under the lock by the keeper, which wakes by itself for it; returns whether
    /// this call is itself a hedged renewal (sent while another is under way).
    /// </summary>
    private bool BeginRenewalLocked(LeaseHandle lease, long sent, long nowTicks)
    {
        var hedge = lease.RenewalsInFlight > 0;
        lease.RenewalsInFlight++;
        lease.LastRenewalSent = sent;
        if (!lease.IsRenewable || _keeperStopping)
        {
            return hedge;
        }

        var worst = _renewRoundTrips.Worst.Ticks;
        var remaining = lease.Message.LockedUntil.UtcTicks - nowTicks;
        var wait = Math.Max(2 * worst, remaining / 2);
        if (lease.RenewalsInFlight >= MaxRenewalsInFlight || worst == 0 || remaining - wait <= _renewRoundTrips.WorstRequestLeg.Ticks)
        {
            // No hedge: one is under way already, no round trip was observed yet (nothing tells an answer late from one
            // on time), or it could not reach the broker before the known expiry. The lease waits for an answer until
            // then, and is lost if none comes.
            ScheduleAtLocked(lease, lease.Message.LockedUntil.UtcTicks, awaitsAnswer: true);
            return hedge;
        }

        ScheduleAtLocked(lease, nowTicks + wait, awaitsAnswer: false);
        return hedge;
    }

    /// <summary>
    /// Puts <paramref name="lease"/> in the schedule due at <paramref name="dueTicks"/> (UTC), without a batching window:
    /// for a renewal (a hedge), or, with <paramref name="awaitsAnswer"/>, for the check at its known expiry. Call under
    /// the lock.
    /// </summary>
    private void ScheduleAtLocked(LeaseHandle lease, long dueTicks, bool awaitsAnswer)
    {
        lease.RenewDueTicks = dueTicks;
        lease.RenewEarliestTicks = dueTicks;
        lease.AwaitsAnswer = awaitsAnswer;
        _schedule.Add(lease);
    }

    /// <summary>
    /// Schedules <paramref name="lease"/> at its known expiry in place of whatever it was scheduled for: a renewal of it
    /// is unanswered, or it is out of retries, and it is lost if its lock has not moved by then. Call under the lock;
    /// returns the keeper's wake to signal (outside the lock), if any.
    /// </summary>
    private TaskCompletionSource? ScheduleExpiryCheckLocked(LeaseHandle lease)
    {
        _schedule.Remove(lease);
        if (!lease.IsRenewable || _keeperStopping)
        {
            return null;
        }

        ScheduleAtLocked(lease, lease.Message.LockedUntil.UtcTicks, awaitsAnswer: true);
        return WakeKeeperForLocked(lease);
    }

    /// <summary>
    /// A renew call sent at <paramref name="sent"/> failed transiently (or was answered wrongly) and goes on under the
    /// retry rule, which owns the lease until it ends: its hedged renewal, if still scheduled, is dropped, and the lease
    /// waits at its known expiry instead. A lease scheduled by another renewal's answer keeps that schedule.
    /// </summary>
    private void DropHedge(LeaseHandle lease, long sent)
    {
        TaskCompletionSource? wake = null;
        lock (_gate)
        {
            if (lease.RenewalsInFlight == 1 && lease.LastRenewalSent == sent)
            {
                wake = ScheduleExpiryCheckLocked(lease);
            }
        }

        wake?.TrySetResult();
    }

    /// <summary>
    /// A renew call of <paramref name="lease"/> answered "renewed": one call fewer under way, and the lease is scheduled
    /// by the rule from its new expiry, in place of its hedge (a hedge still under way answers into the same schedule).
    /// </summary>
    private void RenewalAnswered(LeaseHandle lease)
    {
        TaskCompletionSource? wake;
        lock (_gate)
        {
            lease.RenewalsInFlight--;
            Volatile.Write(ref lease.LastRenewalFailure, null);
            _schedule.Remove(lease);
            wake = ScheduleLocked(lease);
        }

        wake?.TrySetResult();
    }

    /// <summary>
    /// A renew call of <paramref name="lease"/> sent at <paramref name="sent"/> answered "lost". The lease is lost unless the answer is stale: a newer renewal of it was sent after this one and the
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
    /// A renewal of <paramref name="lease"/> sent at <paramref name="sent"/> failed transiently with no lock time left for
    /// another retry: one call fewer under way. The lease is not marked lost yet — its lock still runs — but when its
    /// known expiry passes unrenewed, the keeper marks it lost then (<see cref="ExpiredUnrenewed"/>, with
    /// <paramref name="failure"/> as the cause), unless a newer renewal sent after this one is answered first.
    /// </summary>
    private void RenewalGaveUp(LeaseHandle lease, Exception failure, long sent)
    {
        TaskCompletionSource? wake = null;
        lock (_gate)
        {
            lease.RenewalsInFlight--;
            Volatile.Write(ref lease.LastRenewalFailure, failure);
            if (lease.LastRenewalSent <= sent)
            {
                wake = ScheduleExpiryCheckLocked(lease);
            }
        }

        wake?.TrySetResult();
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
            return UnansweredRenewalLocked(lease) is { HoldsUntil: var holdsUntil } && holdsUntil > known ? holdsUntil : known;
        }
    }

    /// <summary>
    /// The newest unanswered renewal of <paramref name="lease"/> as the broker may have seen it: by when it has most likely
    /// reached the broker (its send plus the typical request leg observed), and until when the lock it
    /// set there may hold at the latest (its send plus the worst request leg plus the lock duration);
    /// <see langword="null"/> when none is unanswered or the source does not know its lock duration. Call under the lock.
    /// </summary>
    private (DateTimeOffset LikelyReachedBy, DateTimeOffset HoldsUntil)? UnansweredRenewalLocked(LeaseHandle lease)
    {
        if (lease.RenewalsInFlight == 0 || lease.Source?.LockDuration is not { } lockDuration)
        {
            return null;
        }

        var sentAt = LastRenewalSentAt(lease);
        return (sentAt + _renewRoundTrips.TypicalRequestLeg, sentAt + _renewRoundTrips.WorstRequestLeg + lockDuration);
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
