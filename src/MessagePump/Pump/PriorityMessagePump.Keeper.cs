using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>The most a lease is renewed ahead of its due time to share a call with leases due after it.</summary>
    private static readonly TimeSpan MaxRenewalWindow = TimeSpan.FromSeconds(1);

    /// <summary>The window is at most this fraction of the time from scheduling to the due time (an eighth).</summary>
    private const int RenewalWindowDivisor = 8;

    private readonly LeaseSchedule _schedule = new();
    private readonly bool _renewsBatchesNatively;
    private readonly CancellationTokenSource _keeperStop = new();
    private TaskCompletionSource? _keeperWake;
    private long _keeperWakeAtTicks = long.MaxValue;
    private bool _keeperStopping;
    private Task _keeper = Task.CompletedTask;

    /// <summary>
    /// The pump's one lease keeper, in the lease lane: sleeps until the first lease falls due (by today's per-message
    /// rule, see <see cref="RenewalBuffer"/>), then takes every lease whose window has come — up to
    /// <see cref="MessagePumpOptions.MaxBatchSize"/> per call — and renews them with one
    /// <see cref="IMessageSource.RenewBatchAsync"/>, without waiting for its answer before the next due leases.
    /// </summary>
    private async Task KeepLeasesAsync()
    {
        var due = new List<MessageContext>();
        while (true)
        {
            TaskCompletionSource wake;
            long waitTicks;
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
                    waitTicks = first is null ? -1 : Math.Max(0, first.RenewDueTicks - now);
                }
                else
                {
                    wake = null!;
                    waitTicks = 0;
                }
            }

            if (due.Count > 0)
            {
                _ = RenewDueAsync([.. due]);
                due.Clear();
                continue;
            }

            await WaitForDueAsync(wake, waitTicks);
        }
    }

    /// <summary>Waits until <paramref name="waitTicks"/> have passed (forever when -1) or the keeper is woken.</summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The keeper's own wake TaskCompletionSource (RunContinuationsAsynchronously), completed only by the pump. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    private async Task WaitForDueAsync(TaskCompletionSource wake, long waitTicks)
    {
        if (waitTicks < 0)
        {
            await wake.Task;
            return;
        }

        using var delay = new CancellationTokenSource();
        await LaneTasks.WhenEitherAsync(wake.Task, Task.Delay(TimeSpan.FromTicks(waitTicks), TimeProvider, delay.Token));
#pragma warning disable VSTHRD103 // Cancel in the lane: CancelAsync would resume the keeper on the thread pool (see SettleAtStopAsync).
        delay.Cancel();
#pragma warning restore VSTHRD103
    }

    /// <summary>
    /// Puts a lease in the schedule, due by today's per-message rule from its current <see cref="ILeasedMessage.LockedUntil"/>,
    /// unless it is no longer kept. Call under the lock; returns the keeper's wake to signal (outside the lock), if any.
    /// </summary>
    private TaskCompletionSource? ScheduleLocked(MessageContext context)
    {
        if (!context.IsRenewable || context.IsScheduled || _keeperStopping)
        {
            return null;
        }

        var now = TimeProvider.GetUtcNow();
        var remaining = context.Message.LockedUntil - now;
        var wait = remaining - RenewalBuffer(remaining);
        var waitTicks = Math.Max(0, wait.Ticks);
        var window = _renewsBatchesNatively ? Math.Min(MaxRenewalWindow.Ticks, waitTicks / RenewalWindowDivisor) : 0;
        context.RenewDueTicks = now.UtcTicks + waitTicks;
        context.RenewEarliestTicks = context.RenewDueTicks - window;
        _schedule.Add(context);
        if (context.RenewDueTicks >= _keeperWakeAtTicks)
        {
            return null;
        }

        // Due before the keeper would wake: wake it now (once, until it plans its next wait).
        _keeperWakeAtTicks = long.MinValue;
        var wake = _keeperWake;
        _keeperWake = null;
        return wake;
    }

    /// <summary>Puts a lease back in the schedule after its renewal (see <see cref="ScheduleLocked"/>).</summary>
    private void Schedule(MessageContext context)
    {
        TaskCompletionSource? wake;
        lock (_gate)
        {
            wake = ScheduleLocked(context);
        }

        wake?.TrySetResult();
    }

    /// <summary>Drops a lease from the schedule: the message is finished, or the stop path stopped renewing it.</summary>
    private void StopRenewing(MessageContext context)
    {
        context.StopRenewing();
        lock (_gate)
        {
            _schedule.Remove(context);
        }
    }

    /// <summary>Starts the keeper in the lease lane (from <see cref="StartAsync"/>).</summary>
    private void StartKeeper() => _keeper = LeaseLane.Run(KeepLeasesAsync);

    /// <summary>Ends the keeper and the renew calls still under way (from the stop path, once nothing is in flight).</summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The pump's own keeper loop, started by StartKeeper in the lease lane. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
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
    }

    /// <summary>
    /// Renews the leases that fell due together in one <see cref="IMessageSource.RenewBatchAsync"/> and applies each
    /// outcome as a single renewal's: renewed (scheduled again), lost (<see cref="OnLeaseLost"/>), or — for a transient
    /// failure, a failed call, or an answer that breaks the contract (reported) — renewed again alone under the single
    /// renewal's retry rule.
    /// </summary>
    private async Task RenewDueAsync(MessageContext[] due)
    {
        var token = _keeperStop.Token;
        try
        {
            while (due.Length > 0)
            {
                var messages = new ILeasedMessage[due.Length];
                var slack = new TimeSpan[due.Length];
                var now = TimeProvider.GetUtcNow();
                for (var i = 0; i < due.Length; i++)
                {
                    messages[i] = due[i].Message;
                    slack[i] = due[i].Message.LockedUntil - now;
                }

                var sent = TimeProvider.GetTimestamp();
                IReadOnlyList<LeaseRenewal>? outcomes = null;
                Exception? failure = null;
                try
                {
                    outcomes = await _source.RenewBatchAsync(messages, token);
                }
                catch (Exception ex) when (!token.IsCancellationRequested)
                {
                    failure = ex;
                }

                token.ThrowIfCancellationRequested(); // the pump has stopped: nothing is in flight any more
                if (failure is null)
                {
                    ApplyRenewals(due, outcomes, slack, TimeProvider.GetElapsedTime(sent));
                    return;
                }

                due = await RetryBatchAfterDelayAsync(due, failure, token);
            }
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            // The pump has stopped.
        }
    }

    /// <summary>
    /// After a failed batch call: the leases with time left for a retry (half their remaining lock, as for a single
    /// renewal, at least <see cref="MinRetryDelay"/>) are renewed again together after the retry delay (one retry,
    /// counted and logged once); the others are lost.
    /// </summary>
    private async Task<MessageContext[]> RetryBatchAfterDelayAsync(MessageContext[] due, Exception failure, CancellationToken token)
    {
        var now = TimeProvider.GetUtcNow();
        var delay = _options.TransientRetryDelay;
        var kept = new List<MessageContext>(due.Length);
        foreach (var context in due)
        {
            if (!context.IsRenewable)
            {
                continue;
            }

            var half = TimeSpan.FromTicks((context.Message.LockedUntil - now).Ticks / 2);
            if (half < MinRetryDelay)
            {
                OnLeaseLost(context, failure, "renew", byLeaseKeeper: true);
                continue;
            }

            delay = half < delay ? half : delay;
            kept.Add(context);
        }

        if (kept.Count == 0)
        {
            return [];
        }

        Interlocked.Increment(ref _transientRetries);
        var ids = kept.Count == 1 ? kept[0].Message.MessageId : $"{kept[0].Message.MessageId} and {kept.Count - 1} more";
        MessagePumpLog.TransientFailure(_logger, failure, Name, "renew", ids, delay);
        await Task.Delay(delay, TimeProvider, token);
        return [.. kept.Where(c => c.IsRenewable)];
    }

    /// <summary>Applies the answer of a batch call; an answer of the wrong length is reported and each lease renewed alone.</summary>
    private void ApplyRenewals(MessageContext[] due, IReadOnlyList<LeaseRenewal>? outcomes, TimeSpan[] slack, TimeSpan roundTrip)
    {
        if (outcomes is null || outcomes.Count != due.Length)
        {
            ReportBrokenRenewal($"{_source.GetType().Name}.RenewBatchAsync answered {outcomes?.Count.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "null"} outcomes for {due.Length} messages; it must answer one per message, in order. Each lease is renewed alone.");
            foreach (var context in due)
            {
                _ = RenewAloneAsync(context, null);
            }

            return;
        }

        _renewRoundTrips.Record(roundTrip);
        for (var i = 0; i < due.Length; i++)
        {
            ApplyRenewal(due[i], outcomes[i], i, slack[i], roundTrip);
        }
    }

    /// <summary>Applies one message's outcome of a batch renewal as a single renewal's.</summary>
    private void ApplyRenewal(MessageContext context, LeaseRenewal outcome, int index, TimeSpan slack, TimeSpan roundTrip)
    {
        switch (outcome.Failure)
        {
            case null when outcome.LockedUntil != context.Message.LockedUntil:
                ReportBrokenRenewal($"{_source.GetType().Name}.RenewBatchAsync answered 'renewed until {outcome.LockedUntil:O}' at index {index}, but that message ({context.Message.MessageId}) reports LockedUntil {context.Message.LockedUntil:O}: the answer is not about it. It is renewed alone.");
                _ = RenewAloneAsync(context, null);
                break;
            case null:
                CountRenewed(context, slack, roundTrip);
                Schedule(context);
                break;
            case LeaseLostException lost:
                OnLeaseLost(context, lost, "renew", byLeaseKeeper: true);
                break;
            case TransientTransportException transient:
                _ = RenewAloneAsync(context, transient);
                break;
            default:
                ReportBrokenRenewal($"{_source.GetType().Name}.RenewBatchAsync answered {outcome.Failure.GetType().Name} at index {index} ({context.Message.MessageId}); a failure must be a LeaseLostException or a TransientTransportException. It is renewed alone.", outcome.Failure);
                _ = RenewAloneAsync(context, null);
                break;
        }
    }

    /// <summary>Reports a batch renewal that broke its contract (log event 34).</summary>
    private InvalidOperationException ReportBrokenRenewal(string message, Exception? inner = null)
    {
        var broken = new InvalidOperationException(message, inner);
        MessagePumpLog.BatchRenewalBroken(_logger, broken, Name);
        return broken;
    }

    /// <summary>
    /// Renews one lease alone, as the per-message keeper did: after the retry delay when <paramref name="transient"/>
    /// is the failure of its batch's call or answer for it (at once when null), retrying while the lock lasts; scheduled
    /// again when renewed.
    /// </summary>
    private async Task RenewAloneAsync(MessageContext context, Exception? transient)
    {
        var token = _keeperStop.Token;
        try
        {
            if (transient is not null && context.IsRenewable && await RetryDelayAsync(context, transient, "renew", token) is not true)
            {
                OnLeaseLost(context, transient, "renew", byLeaseKeeper: true);
                return;
            }

            if (await RenewAsync(context, token))
            {
                Schedule(context);
            }
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            // The pump has stopped.
        }
    }

    /// <summary>Counts one renewed lease (statistics, metrics, log).</summary>
    private void CountRenewed(MessageContext context, TimeSpan slack, TimeSpan roundTrip)
    {
        Interlocked.Increment(ref _renewals);
        context.CountRenewal();
        _telemetry.Renewed(slack, roundTrip);
        MessagePumpLog.Renewed(_logger, Name, context.Message.MessageId, slack);
    }
}
