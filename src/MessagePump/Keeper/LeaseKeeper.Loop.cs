using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

public sealed partial class LeaseKeeper
{
    /// <summary>
    /// The keeper's loop, in the lease lane: sleeps until the first lease of the schedule falls due — by the per-message
    /// rule (see <see cref="RenewalBuffer"/>), for its hedge, or, while a renewal of it is unanswered, at its known
    /// expiry — then takes every lease whose time has come, up to <see cref="LeaseKeeperOptions.MaxBatchSize"/> per
    /// turn. A lease whose known expiry (<see cref="ILeasedMessage.LockedUntil"/>, moved only by an answered renewal)
    /// has passed is lost at that instant, whether its renewal was never sent, refused, throttled or is still
    /// unanswered (<see cref="ExpiredUnrenewed"/>); the others are renewed with one <see cref="IMessageSource.RenewBatchAsync"/>
    /// per source, without waiting for the answer before the next due leases. Every kept lease is in the schedule
    /// exactly once, so a released lease leaves nothing behind.
    /// </summary>
    private async Task KeepLeasesAsync()
    {
        var due = new List<LeaseHandle>();
        var renew = new List<LeaseHandle>();
        var expired = new List<LeaseHandle>();
        while (true)
        {
            TaskCompletionSource wake;
            long dueTicks;
            long sent = 0;
            var hedged = 0;
            lock (_gate)
            {
                if (_keeperStopping)
                {
                    return;
                }

                // A lease due within a millisecond is due now: clocks and timers work in whole milliseconds, and a timer
                // that fires a fraction of one early must not send the keeper back to sleep for the rest.
                var now = TimeProvider.GetUtcNow().UtcTicks;
                _schedule.TakeDue(now + TimeSpan.TicksPerMillisecond, _options.MaxBatchSize, due);
                if (due.Count == 0)
                {
                    wake = _keeperWake = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                    var first = _schedule.First;
                    _keeperWakeAtTicks = first?.RenewDueTicks ?? long.MaxValue;
                    dueTicks = first?.RenewDueTicks ?? -1;
                }
                else
                {
                    wake = null!;
                    dueTicks = 0;
                    sent = TimeProvider.GetTimestamp();
                    hedged = SortDueLocked(due, now, renew, expired, sent);
                    due.Clear();
                }
            }

            if (dueTicks != 0)
            {
                await WaitForDueAsync(wake, dueTicks);
                continue;
            }

            foreach (var lease in expired)
            {
                ExpiredUnrenewed(lease);
            }

            expired.Clear();
            if (renew.Count > 0)
            {
                RenewBySource(renew, sent, hedged);
                renew.Clear();
            }
        }
    }

    /// <summary>
    /// Sorts the leases taken due: those whose known expiry has passed into <paramref name="expired"/>; those checked
    /// at their expiry whose lock moved meanwhile (the user renewed it, out of the keeper's sight) back into the schedule
    /// by the rule; the rest into <paramref name="renew"/>, each renewal begun (<see cref="BeginRenewalLocked"/>).
    /// Returns how many of those are hedges. Call under the lock.
    /// </summary>
    private int SortDueLocked(List<LeaseHandle> due, long nowTicks, List<LeaseHandle> renew, List<LeaseHandle> expired, long sent)
    {
        var hedged = 0;
        foreach (var lease in due)
        {
            if (EffectiveExpiryLocked(lease).UtcTicks <= nowTicks + TimeSpan.TicksPerMillisecond)
            {
                if (VerdictWaitsUntilLocked(lease, nowTicks) is { } verdictTicks)
                {
                    ScheduleAtLocked(lease, verdictTicks, awaitsAnswer: true);
                }
                else
                {
                    expired.Add(lease);
                }
            }
            else if (lease.AwaitsAnswer)
            {
                ScheduleLocked(lease); // the keeper runs next anyway: no wake to signal
            }
            else if (lease.RenewalsInFlight >= MaxRenewalsInFlight)
            {
                ScheduleAtLocked(lease, VerdictDueLocked(lease), awaitsAnswer: true);
            }
            else
            {
                renew.Add(lease);
                hedged += BeginRenewalLocked(lease, sent, nowTicks) ? 1 : 0;
            }
        }

        return hedged;
    }

    /// <summary>
    /// At a lease's known expiry with a renewal of it unanswered: when that renewal was sent early enough to have reached
    /// the broker before the expiry (its send plus the typical request leg observed) and no answer is overdue
    /// (<see cref="OverdueAfterLocked"/>), the broker has most likely moved the lock and only its answer is late (a starved thread pool holds answers longer than requests), so
    /// the verdict waits for the answer — renewed, or lost when it says so (a broker that no longer held the lock
    /// refuses to renew it) — until the latest the broker could hold the lock on that renewal (its send plus the worst
    /// request leg plus the lock duration), when the lease is lost. The typical leg, not the worst, decides whether it
    /// arrived: the worst of a window is one slow leg (the first renewal on a link the client opens with it), and
    /// judging every later renewal by it marks locks lost that the broker holds. Returns that time (UTC ticks), or
    /// <see langword="null"/> when the lease is lost now: nothing is unanswered, no round trip was observed yet (nothing
    /// tells a late answer from a renewal that never arrived), the source does not know its lock duration, the renewal
    /// was sent too late to arrive in time, its answer is overdue (a client that holds calls after a throttled answer has
    /// most likely not sent it), or that latest time has passed. Call under the lock.
    /// </summary>
    private long? VerdictWaitsUntilLocked(LeaseHandle lease, long nowTicks)
    {
        var known = lease.Message.LockedUntil;
        if (!WaitsForAnswerLocked(lease, known, out var holdsUntil))
        {
            return null;
        }

        // Judged again when the renewals become overdue, if that comes first: nothing unanswered then holds the lock.
        var verdict = Math.Min(holdsUntil.UtcTicks, OverdueAtLocked(lease));
        return verdict > nowTicks + TimeSpan.TicksPerMillisecond ? verdict : null;
    }

    /// <summary>
    /// The keeper's one rule for how long <paramref name="lease"/>'s lock is held (see <see cref="VerdictWaitsUntilLocked"/>):
    /// its known expiry <paramref name="known"/>, or, while renewals of it are unanswered, the newest that most likely
    /// reached the broker in time (<see cref="EffectiveExpiryLocked"/>) and the oldest not overdue (and a round trip has
    /// been observed), the latest that renewal can hold it. Call under the lock.
    /// </summary>
    private DateTimeOffset HeldUntilLocked(LeaseHandle lease, DateTimeOffset known) =>
        WaitsForAnswerLocked(lease, known, out var holdsUntil) ? holdsUntil : known;

    /// <summary>
    /// Whether unanswered renewals of <paramref name="lease"/> may still hold its lock past <paramref name="known"/>: a
    /// round trip has been observed, one of them most likely reached the broker in time, the oldest is not overdue now,
    /// and the latest the newest can hold the lock (<paramref name="holdsUntil"/>) is later. Call under the lock.
    /// </summary>
    private bool WaitsForAnswerLocked(LeaseHandle lease, DateTimeOffset known, out DateTimeOffset holdsUntil)
    {
        if (EffectiveExpiryLocked(lease) > known && UnansweredRenewalLocked(lease) is { } renewal && renewal.HoldsUntil > known)
        {
            holdsUntil = renewal.HoldsUntil;
            return true;
        }

        holdsUntil = known;
        return false;
    }

    /// <summary>
    /// How long the keeper holds <paramref name="lease"/>'s lock to be held (<see cref="LeaseHandle.HeldUntil"/>): the
    /// time at which it marks the lease lost unless a renewal is answered first. A lost or released lease answers its
    /// known expiry.
    /// </summary>
    internal DateTimeOffset HeldUntil(LeaseHandle lease)
    {
        var known = lease.Message.LockedUntil;
        if (!lease.IsRenewable)
        {
            return known;
        }

        lock (_gate)
        {
            return HeldUntilLocked(lease, known);
        }
    }

    /// <summary>
    /// Judges <paramref name="lease"/> now, for a transport about to hand out a message under its lock (a session's next
    /// message): true while the keeper holds it (<see cref="HeldUntil"/> is later than now); otherwise false, and the
    /// lease is lost out loud, as at its expiry (<see cref="ExpiredUnrenewed"/>, in the lease lane, where every loss is
    /// reported), the caller treating it as lost from this instant. A lease already lost or released answers false.
    /// </summary>
    internal bool ConfirmHeld(LeaseHandle lease)
    {
        if (!lease.IsRenewable)
        {
            return false;
        }

        if (HeldUntil(lease) > TimeProvider.GetUtcNow())
        {
            return true;
        }

        try
        {
            _ = LeaseLane.Run(() => ExpiredUnrenewed(lease));
        }
        catch (Exception ex) when (ex is InvalidOperationException or ObjectDisposedException)
        {
            // the scheduler stopped: the keeper with it, and nothing is kept any more
        }

        return false;
    }

    /// <summary>
    /// Gets the latest time the broker may still hold a lock the keeper marked lost at its known expiry: a renewal of it
    /// was unanswered then, and may have reached the broker and moved the lock (see <see cref="LatestExpiry"/>). A pump's
    /// stop waits for it, so that nothing it received is still locked when the stop returns.
    /// </summary>
    internal DateTimeOffset LostLocksHeldUntil => new(Math.Max(0, Interlocked.Read(ref _lostLocksHeldUntilTicks)), TimeSpan.Zero);

    /// <summary>
    /// The known expiry of <paramref name="lease"/> passed with no renewal answered in time (none sent, refused,
    /// throttled, or unanswered, and not one that could have reached the broker in time: see
    /// <see cref="VerdictWaitsUntilLocked"/>): the broker may give the message to another consumer now, so the lease is
    /// lost at this instant, out loud — token canceled, event, log, statistics — whatever a renewal under way answers later.
    /// </summary>
    private void ExpiredUnrenewed(LeaseHandle lease)
    {
        var mayHold = LatestExpiry(lease).UtcTicks;
        long held;
        do
        {
            held = Interlocked.Read(ref _lostLocksHeldUntilTicks);
        }
        while (mayHold > held && Interlocked.CompareExchange(ref _lostLocksHeldUntilTicks, mayHold, held) != held);

        var failure = Volatile.Read(ref lease.LastRenewalFailure);
        var message = $"The lock of message {lease.Message.MessageId} ran out at {lease.Message.LockedUntil:O} with no renewal answered before it";
        LeaseLostByKeeper(lease, failure is null
            ? new LeaseLostException(message + ".")
            : new LeaseLostException($"{message} (the last renewal failed: {failure.Message}).", failure));
    }

    /// <summary>
    /// Waits until the clock reaches <paramref name="dueTicks"/> (UTC; forever when -1) or the keeper is woken. The timer
    /// is made from the clock read just before it, and made again when the clock moved by a millisecond or more between
    /// that read and the timer (a virtual clock advanced by another thread): a timer made from a stale reading would fire
    /// late by the move, and a test that advances its clock only while the lease has lock left would wait for it forever.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The keeper's own wake TaskCompletionSource (RunContinuationsAsynchronously), completed only by the keeper. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    private async Task WaitForDueAsync(TaskCompletionSource wake, long dueTicks)
    {
        if (dueTicks < 0)
        {
            await wake.Task;
            return;
        }

        using var delay = new CancellationTokenSource();
        Task timer;
        var attempts = 0;
        while (true)
        {
            var read = TimeProvider.GetUtcNow().UtcTicks;
            timer = Task.Delay(TimeSpan.FromTicks(Math.Max(0, dueTicks - read)), TimeProvider, delay.Token);
            if (++attempts >= MaxTimerAttempts || TimeProvider.GetUtcNow().UtcTicks - read < TimeSpan.TicksPerMillisecond)
            {
                break;
            }
        }

        await LaneTasks.WhenEitherAsync(wake.Task, timer);
#pragma warning disable VSTHRD103 // Cancel in the lane: CancelAsync would resume the keeper on the thread pool (see SettleAtStopAsync).
        delay.Cancel(); // the timer, and any made from a stale reading
#pragma warning restore VSTHRD103
    }

    /// <summary>How many times <see cref="WaitForDueAsync"/> makes its timer again while the clock keeps moving under it.</summary>
    private const int MaxTimerAttempts = 8;

    /// <summary>
    /// Puts a lease in the schedule, due by the per-message rule from the expiry the broker most likely holds
    /// (<see cref="EffectiveExpiryLocked"/>: its <see cref="ILeasedMessage.LockedUntil"/>, or a newer renewal's still
    /// under way), unless it is no longer kept. Call under the lock; returns the keeper's wake to signal (outside the lock), if any.
    /// </summary>
    private TaskCompletionSource? ScheduleLocked(LeaseHandle lease)
    {
        if (!lease.IsRenewable || lease.IsScheduled || _keeperStopping)
        {
            return null;
        }

        var now = TimeProvider.GetUtcNow();
        var remaining = EffectiveExpiryLocked(lease) - now;
        var buffer = RenewalBuffer(remaining, lease.Source);
        var wait = remaining - buffer;
        var waitTicks = Math.Max(0, wait.Ticks);
        lease.PlannedSlackTicks = buffer.Ticks;
        var window = lease.Source?.RenewsBatchesNatively == true ? Math.Min(MaxRenewalWindow.Ticks, waitTicks / RenewalWindowDivisor) : 0;
        lease.RenewDueTicks = now.UtcTicks + waitTicks;
        lease.RenewEarliestTicks = lease.RenewDueTicks - window;
        lease.AwaitsAnswer = false;
        if (lease.RenewalsInFlight > 0 && VerdictDueLocked(lease) is var verdictDue && verdictDue < lease.RenewDueTicks)
        {
            // Renewals still out may become overdue first: the lease is judged then.
            lease.RenewDueTicks = lease.RenewEarliestTicks = verdictDue;
            lease.AwaitsAnswer = true;
        }
        _schedule.Add(lease);
        return WakeKeeperForLocked(lease);
    }

    /// <summary>The keeper's wake to signal (outside the lock) when <paramref name="lease"/> falls due before the keeper would wake, else null. Call under the lock.</summary>
    private TaskCompletionSource? WakeKeeperForLocked(LeaseHandle lease)
    {
        if (lease.RenewDueTicks >= _keeperWakeAtTicks)
        {
            return null;
        }

        // Due before the keeper would wake: wake it now (once, until it plans its next wait).
        _keeperWakeAtTicks = long.MinValue;
        var wake = _keeperWake;
        _keeperWake = null;
        return wake;
    }

    /// <summary>Starts the keeper's loop in the lease lane (at construction, or from a pump's start).</summary>
    internal void Start() => _keeper = LeaseLane.Run(KeepLeasesAsync);

    /// <summary>
    /// Ends the keeper's loop and the renew calls still under way (a pump's stop path calls it once nothing is in
    /// flight), then releases the leases still kept.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The keeper's own loop, started by Start in the lease lane. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    private async Task StopKeeperAsync()
    {
        TaskCompletionSource? wake;
        lock (_gate)
        {
            _keeperStopping = true;
            wake = _keeperWake;
            _keeperWake = null;
        }

        wake?.TrySetResult();
#pragma warning disable VSTHRD103 // Cancel in the lane: CancelAsync would resume the stop path on the thread pool (see SettleAtStopAsync).
        _keeperStop.Cancel();
#pragma warning restore VSTHRD103
        await _keeper.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
        LeaseHandle[] kept;
        lock (_gate)
        {
            kept = [.. _kept.Values];
        }

        foreach (var lease in kept)
        {
            Release(lease);
        }
    }

    /// <summary>Sends the leases that fell due together: one batch per source (nearly always a single one); <paramref name="hedged"/> of them are hedges (reported).</summary>
    private void RenewBySource(List<LeaseHandle> due, long sent, int hedged)
    {
        if (hedged > 0)
        {
            _events.RenewalsHedged(hedged);
        }

        var source = due[0].Source;
        if (due.TrueForAll(l => ReferenceEquals(l.Source, source)))
        {
            _ = RenewDueAsync([.. due], source, sent);
            return;
        }

        foreach (var group in due.GroupBy(l => l.Source, ReferenceEqualityComparer.Instance))
        {
            _ = RenewDueAsync([.. group], (IMessageSource?)group.Key, sent);
        }
    }

    /// <summary>
    /// How much lock time may remain at renewal: min(half the lock, 10 s) — Azure Service Bus's rule, and the renewal
    /// budget: at most two renewals per lock duration; the lock is the source's <see cref="IMessageSource.LockDuration"/>
    /// where it knows it, else the lock left now — or the option when the user set one (honoured as set: a buffer above
    /// half the lock costs more than two renewals per lock duration, and buys slack against a slice that holds the
    /// lease lane). Slow round trips renew earlier, never more often: the buffer is at least three worst round trips of
    /// the last 32 — the whole round trip, since the known expiry moves only when an answer comes back, and the keeper
    /// marks a lease lost when it passes unanswered — but that floor stops at half the lock, so the budget holds at any
    /// round trip up to a third of the lock; past that the keeper reports the lock as too short for its round trips
    /// (<see cref="ReportSlowRoundTrips"/>) instead of renewing it continuously.
    /// </summary>
    private TimeSpan RenewalBuffer(TimeSpan remaining, IMessageSource? source)
    {
        if (remaining <= TimeSpan.Zero)
        {
            return TimeSpan.Zero;
        }

        var lockTime = source?.LockDuration is { } lockDuration && lockDuration > TimeSpan.Zero && lockDuration >= remaining ? lockDuration : remaining;
        var half = TimeSpan.FromTicks(lockTime.Ticks / 2);
        var rule = _options.LockRenewalBuffer ?? (half < MaxDefaultRenewalBuffer ? half : MaxDefaultRenewalBuffer);
        var needed = _renewRoundTrips.RequiredSlack;
        if (needed > lockTime)
        {
            ReportSlowRoundTrips(_renewRoundTrips.Worst, lockTime);
        }
        else
        {
            Volatile.Write(ref _slowRoundTripsReported, 0);
        }

        var byRoundTrip = needed < half ? needed : half;
        return byRoundTrip > rule ? byRoundTrip : rule;
    }

    /// <summary>
    /// Reports (log event 36, once until round trips fit again) that renewals take more than a third of the lock: the
    /// keeper renews at half the lock and keeps its budget, but a renewal may reach the broker after the lock ends.
    /// </summary>
    private void ReportSlowRoundTrips(TimeSpan roundTrip, TimeSpan lockTime)
    {
        if (Interlocked.Exchange(ref _slowRoundTripsReported, 1) == 0)
        {
            _events.RoundTripsTooSlowForLock(roundTrip, lockTime);
        }
    }
}
