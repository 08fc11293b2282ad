namespace PriorityAsync.MessagePump;

public sealed partial class LeaseKeeper
{
    /// <summary>
    /// Marks a renew call of <paramref name="lease"/> sent at <paramref name="sent"/> (a timestamp) and plans what follows
    /// while its answer is out. When the renewal most likely reaches the broker before the expiry the broker holds (its
    /// send plus the typical request leg observed, before <see cref="EffectiveExpiryLocked"/>), the broker most likely
    /// holds the lock until then plus the lock duration (<see cref="LeaseHandle.PresumedUntilTicks"/>), and the next
    /// renewal is due by the per-message rule from that expiry, as if answered: answers slower than half the lock (a
    /// starved thread pool holds answers longer than requests) neither stop the renewals nor make them more frequent —
    /// at most two per lock duration, whatever the round trip. Before that, one hedge is sent if this answer is later
    /// than the round trips observed — twice the worst of the last 32, and at least half the lock time left now — and
    /// only once a round trip has been observed and the hedge could still reach the broker before the known expiry. And
    /// the lease is judged no later than <see cref="VerdictDueLocked"/>. A renewal answered in time takes the lease out of
    /// that slot (<see cref="RenewalAnswered"/>), so a broker that answers in time never sees a second call. Call under
    /// the lock by the keeper, which wakes by itself for it; returns whether this call is sent while another is under way.
    /// </summary>
    private bool BeginRenewalLocked(LeaseHandle lease, long sent, long nowTicks)
    {
        var hedge = lease.RenewalsInFlight > 0;
        if (!hedge)
        {
            lease.OldestUnansweredSent = sent;
            lease.PresumedUntilTicks = 0;
        }

        var effective = EffectiveExpiryLocked(lease).UtcTicks;
        var presumable = PresumptionHoldsLocked(lease) || !hedge;
        lease.SlackAtSendTicks = effective - nowTicks;
        lease.RenewalsInFlight++;
        lease.LastRenewalSent = sent;
        var worst = _renewRoundTrips.Worst.Ticks;
        if (presumable && worst != 0 && lease.Source?.LockDuration is { } lockDuration && nowTicks + _renewRoundTrips.TypicalRequestLeg.Ticks < effective)
        {
            lease.PresumedUntilTicks = nowTicks + _renewRoundTrips.TypicalRequestLeg.Ticks + lockDuration.Ticks;
        }

        if (!lease.IsRenewable || _keeperStopping)
        {
            return hedge;
        }

        var known = lease.Message.LockedUntil.UtcTicks;
        var remaining = known - nowTicks;
        var wait = Math.Max(2 * worst, remaining / 2);
        var hedgeDue = lease.RenewalsInFlight > 1 || worst == 0 || remaining - wait <= _renewRoundTrips.WorstRequestLeg.Ticks
            ? long.MaxValue
            : nowTicks + wait;
        var presumed = EffectiveExpiryLocked(lease).UtcTicks;
        var nextDue = presumed > known && lease.RenewalsInFlight < MaxRenewalsInFlight
            ? Math.Max(nowTicks, presumed - RenewalBuffer(TimeSpan.FromTicks(presumed - nowTicks), lease.Source).Ticks)
            : long.MaxValue;
        var verdictDue = VerdictDueLocked(lease);
        var due = Math.Min(hedgeDue, nextDue);
        ScheduleAtLocked(lease, Math.Min(due, verdictDue), awaitsAnswer: verdictDue <= due);
        return hedge;
    }

    /// <summary>
    /// The expiry the broker most likely holds for <paramref name="lease"/>: its known expiry, or, while a renewal of it
    /// that most likely reached the broker in time is unanswered and the renewals are not overdue
    /// (<see cref="PresumptionHoldsLocked"/>), the expiry that renewal set (<see cref="LeaseHandle.PresumedUntilTicks"/>).
    /// The keeper schedules by it; an answer replaces it with the broker's word. Call under the lock.
    /// </summary>
    private DateTimeOffset EffectiveExpiryLocked(LeaseHandle lease)
    {
        var known = lease.Message.LockedUntil;
        return lease.PresumedUntilTicks > known.UtcTicks && PresumptionHoldsLocked(lease)
            ? new DateTimeOffset(lease.PresumedUntilTicks, TimeSpan.Zero)
            : known;
    }

    /// <summary>
    /// Whether unanswered renewals of <paramref name="lease"/> may be taken to have reached the broker: some are under way,
    /// a round trip has been observed, and no answer is overdue — the last sign of the broker (<see cref="LastSignLocked"/>)
    /// is within <see cref="OverdueAfterLocked"/>. Renewals unanswered past that were
    /// most likely never sent — a client that backs off after a throttled answer (the Service Bus SDK holds every call
    /// for 10 s after <c>ServiceBusy</c>) keeps them — and hold nothing. Call under the lock.
    /// </summary>
    private bool PresumptionHoldsLocked(LeaseHandle lease) =>
        lease.RenewalsInFlight > 0 && _renewRoundTrips.Worst != TimeSpan.Zero
        && TimeProvider.GetElapsedTime(LastSignLocked(lease)).Ticks + TimeSpan.TicksPerMillisecond < OverdueAfterLocked(lease); // due within a millisecond is due now, as the keeper's loop takes it

    /// <summary>
    /// The last sign of the broker for <paramref name="lease"/> (a timestamp): its oldest renewal unanswered, or the newest
    /// answer the keeper heard since for any lease. Answers that keep coming for other leases mean the client still
    /// talks to the broker, only slowly (a flooded pool); none at all means its calls are held (a throttled client).
    /// Call under the lock.
    /// </summary>
    private long LastSignLocked(LeaseHandle lease) => Math.Max(lease.OldestUnansweredSent, _lastAnswerHeard);

    /// <summary>
    /// How long (ticks) a renewal of <paramref name="lease"/> may go unanswered before it is overdue: twice the worst round
    /// trip observed (the hedge's measure of a late answer), and at least half the lock duration — a renewal sent at half
    /// the lock whose answer has not come by the known expiry is taken as never sent, unless answers that slow have been
    /// seen. Call under the lock.
    /// </summary>
    private long OverdueAfterLocked(LeaseHandle lease) =>
        Math.Max(2 * _renewRoundTrips.Worst.Ticks, (lease.Source?.LockDuration?.Ticks ?? 0) / 2);

    /// <summary>When (UTC ticks) the renewals of <paramref name="lease"/> under way become overdue. Call under the lock.</summary>
    private long OverdueAtLocked(LeaseHandle lease) =>
        TimeProvider.GetUtcNow().UtcTicks + (OverdueAfterLocked(lease) - TimeProvider.GetElapsedTime(LastSignLocked(lease)).Ticks);

    /// <summary>
    /// When (UTC ticks) <paramref name="lease"/> must be judged at the latest: its known expiry, or, while the
    /// presumption holds, the earlier of the presumed expiry and the instant the renewals become overdue (when the known
    /// expiry, passed by then, decides). Call under the lock.
    /// </summary>
    private long VerdictDueLocked(LeaseHandle lease)
    {
        var known = lease.Message.LockedUntil.UtcTicks;
        var effective = EffectiveExpiryLocked(lease).UtcTicks;
        return effective == known ? known : Math.Min(effective, Math.Max(known, OverdueAtLocked(lease)));
    }

    /// <summary>
    /// One renewal of <paramref name="lease"/> has its answer: one fewer under way, and the newest sign of the broker
    /// (<see cref="LastSignLocked"/>), from which the overdue time of those still out counts. Call under the lock.
    /// </summary>
    private void AnswerArrivedLocked(LeaseHandle lease)
    {
        _lastAnswerHeard = TimeProvider.GetTimestamp();
        lease.RenewalsInFlight--;
        if (lease.RenewalsInFlight == 0)
        {
            lease.PresumedUntilTicks = 0;
        }
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
    /// A renew call of <paramref name="lease"/> answered "renewed": one call fewer under
    /// way, and the lease is scheduled by the rule from the expiry the broker most likely holds now (the answer's, or a
    /// newer renewal's still under way), in place of the slot planned while the answer was out.
    /// </summary>
    private void RenewalAnswered(LeaseHandle lease)
    {
        TaskCompletionSource? wake;
        lock (_gate)
        {
            AnswerArrivedLocked(lease);
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
            var effective = EffectiveExpiryLocked(lease);
            AnswerArrivedLocked(lease);
            if (lease.LastRenewalSent > sent && effective > TimeProvider.GetUtcNow())
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
            AnswerArrivedLocked(lease);
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
