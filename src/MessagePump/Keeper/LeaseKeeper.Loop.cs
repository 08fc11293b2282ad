using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

public sealed partial class LeaseKeeper
{
    /// <summary>
    /// The keeper's loop, in the lease lane: sleeps until the first lease falls due (by the per-message
    /// rule, see <see cref="RenewalBuffer"/>), then takes every lease whose window has come — up to
    /// <see cref="LeaseKeeperOptions.MaxBatchSize"/> per call — and renews them with one
    /// <see cref="IMessageSource.RenewBatchAsync"/> per source, without waiting for its answer before the next due leases. Each lease
    /// sent is scheduled again at once for its hedged renewal (see <see cref="BeginRenewalLocked"/>).
    /// </summary>
    private async Task KeepLeasesAsync()
    {
        var due = new List<LeaseHandle>();
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
                    foreach (var lease in due)
                    {
                        hedged += BeginRenewalLocked(lease, sent, now) ? 1 : 0;
                    }
                }
            }

            if (due.Count > 0)
            {
                if (hedged > 0)
                {
                    _events.RenewalsHedged(hedged);
                }

                RenewBySource(due, sent);
                due.Clear();
                continue;
            }

            await WaitForDueAsync(wake, dueTicks);
        }
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
    /// Puts a lease in the schedule, due by the per-message rule from its current <see cref="ILeasedMessage.LockedUntil"/>,
    /// unless it is no longer kept. Call under the lock; returns the keeper's wake to signal (outside the lock), if any.
    /// </summary>
    private TaskCompletionSource? ScheduleLocked(LeaseHandle lease)
    {
        if (!lease.IsRenewable || lease.IsScheduled || _keeperStopping)
        {
            return null;
        }

        var now = TimeProvider.GetUtcNow();
        var remaining = lease.Message.LockedUntil - now;
        var buffer = RenewalBuffer(remaining, lease.Source);
        var wait = remaining - buffer;
        var waitTicks = Math.Max(0, wait.Ticks);
        lease.PlannedSlackTicks = buffer.Ticks;
        var window = lease.Source?.RenewsBatchesNatively == true ? Math.Min(MaxRenewalWindow.Ticks, waitTicks / RenewalWindowDivisor) : 0;
        lease.RenewDueTicks = now.UtcTicks + waitTicks;
        lease.RenewEarliestTicks = lease.RenewDueTicks - window;
        _schedule.Add(lease);
        return WakeKeeperForLocked(lease);
    }

    /// <summary>
    /// Puts a lease whose renewals are under way in the schedule due at <paramref name="dueTicks"/> (UTC; due now if
    /// that has passed), without a batching window. Call under the lock; returns the keeper's wake to signal, if any.
    /// </summary>
    private TaskCompletionSource? ScheduleNextLocked(LeaseHandle lease, long dueTicks)
    {
        ScheduleAtLocked(lease, Math.Max(dueTicks, TimeProvider.GetUtcNow().UtcTicks));
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

    /// <summary>Sends the leases that fell due together: one batch per source (nearly always a single one).</summary>
    private void RenewBySource(List<LeaseHandle> due, long sent)
    {
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
    /// How much lock time may remain at renewal: min(half of the remaining lock, 10 s) — Azure Service Bus's rule, and the
    /// renewal budget: at most two renewals per lock duration — or the option when the user set one (honoured as set: a
    /// buffer above half the lock costs more than two renewals per lock duration, and buys slack against a slice that
    /// holds the lease lane). In both cases at least three times the time a renewal needs to act: a renewal sent
    /// later than that could not reach the broker before the lock ends. Where the source knows its lock duration that
    /// time is the worst request leg observed lately (how long a renewal took to reach the broker): renewals are then
    /// pipelined (<see cref="BeginRenewalLocked"/>), so an answer that comes back late holds no renewal back and must not
    /// make the next one earlier either — on a starved thread pool answers wait hundreds of milliseconds for a thread,
    /// and counting that wait sent a renewal at once after each late answer (2.5 renew calls per lock duration on the
    /// starved-pool head-to-head instead of 2). Otherwise it is the worst whole round trip (measured until the keeper
    /// runs again, so it includes the slice that was running when the answer came).
    /// </summary>
    private TimeSpan RenewalBuffer(TimeSpan remaining, IMessageSource? source)
    {
        if (remaining <= TimeSpan.Zero)
        {
            return TimeSpan.Zero;
        }

        var rule = _options.LockRenewalBuffer ?? TimeSpan.FromTicks(Math.Min(remaining.Ticks / 2, MaxDefaultRenewalBuffer.Ticks));
        var byRoundTrip = source?.LockDuration is { } lockDuration && lockDuration > TimeSpan.Zero
            ? TimeSpan.FromTicks(_renewRoundTrips.WorstRequestLeg.Ticks * RenewRoundTrips.SafetyFactor)
            : _renewRoundTrips.RequiredSlack;
        return byRoundTrip > rule ? byRoundTrip : rule;
    }
}
