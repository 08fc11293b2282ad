using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>
    /// Runs the stop in the lease lane, so that its timeout, its waits and its settlements are the most urgent work of
    /// the scheduler (on a <see cref="PriorityTaskScheduler"/>, its reserved lease worker), whatever thread called
    /// <see cref="StopAsync"/>: from the thread pool, each of its continuations would wait for a pool thread, and the
    /// pool is what CPU-heavy consumers starve. A scheduler that no longer accepts work runs the stop on the caller's
    /// context instead.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "Awaits the pump's own stop, started here in the lease lane. No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    private async Task RunStopAsync(TaskCompletionSource stopped, CancellationToken cancellationToken)
    {
        try
        {
            Task stop;
            try
            {
                stop = LeaseLane.Run(() => StopCoreAsync(cancellationToken));
            }
            catch (Exception ex) when (ex is ObjectDisposedException or InvalidOperationException)
            {
                stop = StopCoreAsync(cancellationToken);
            }

            await stop;
            stopped.TrySetResult();
        }
        catch (Exception ex)
        {
            stopped.TrySetException(ex);
        }
    }

    /// <summary>
    /// The stop: no receive call begins from now on; the messages of the one under way, if any, join those in flight;
    /// those get what is left of <see cref="MessagePumpOptions.ShutdownTimeout"/>, counted from the stop's start; then
    /// each still unfinished is settled at the stop (<see cref="SettleAtStopAsync"/>). The stop never waits for the
    /// receive loop, which runs in the least urgent lane: handlers busy with CPU work keep that lane from running for
    /// as long as they run, and the timeout must bound the stop at any load. The loop ends by itself the next time it
    /// runs (its token is canceled and no receive call can begin).
    /// </summary>
    private async Task StopCoreAsync(CancellationToken cancellationToken)
    {
        if (_state == State.Stopped)
        {
            return;
        }

        var stopStarted = TimeProvider.GetTimestamp();
        Volatile.Write(ref _stopStartedTicks, TimeProvider.GetUtcNow().UtcTicks);
#pragma warning disable VSTHRD103 // Cancel in the lane: CancelAsync would resume this stop path on the thread pool (see SettleAtStopAsync).
        _receiveCancellation.Cancel();
#pragma warning restore VSTHRD103
        PumpDelivery[] inFlight;
        lock (_gate)
        {
            SignalCapacityLocked();
        }

        await ReceiveCallEndedAsync().ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
        lock (_gate)
        {
            inFlight = [.. _inFlight];
        }

        _events.Stopping(inFlight.Length, _options.ShutdownTimeout);
        var finished = await WaitForInFlightAsync(inFlight, stopStarted, cancellationToken);
        if (!finished.IsCompleted)
        {
            var givenUp = inFlight.Where(m => !m.Finished.IsCompleted).ToArray();
            Volatile.Write(ref _givenUpAtStop, givenUp);
            var settlements = givenUp.Select(m => LeaseLane.Run(() => SettleAtStopAsync(m)));
            await LaneTasks.WhenAllAsync(settlements.ToArray());
        }

        // A lease the keeper found lost at its known expiry while a renewal was unanswered may still be locked at the
        // broker, by that renewal: wait it out, as for a settlement still unanswered, so that nothing is locked on return.
        var lostLocksHeld = Keeper.LostLocksHeldUntil - TimeProvider.GetUtcNow();
        if (lostLocksHeld > TimeSpan.Zero)
        {
            await PauseAsync(lostLocksHeld, CancellationToken.None);
        }

        await Keeper.StopAsync();
        Volatile.Write(ref _stopOverrunTicks, StopOverrun(TimeProvider.GetElapsedTime(stopStarted)).Ticks);
        lock (_gate)
        {
            _state = State.Stopped;
        }

        _events.Stopped();
    }

    /// <summary>
    /// Waits for the messages in flight at the stop for what is left of <see cref="MessagePumpOptions.ShutdownTimeout"/>
    /// since <paramref name="stopStarted"/>, or until <paramref name="cancellationToken"/> ends the wait; returns the task
    /// of all of them finishing.
    /// </summary>
    private async Task<Task> WaitForInFlightAsync(PumpDelivery[] inFlight, long stopStarted, CancellationToken cancellationToken)
    {
        var finished = LaneTasks.WhenAllAsync(inFlight.Select(m => m.Finished));
        var timeLeft = _options.ShutdownTimeout == Timeout.InfiniteTimeSpan
            ? Timeout.InfiniteTimeSpan
            : _options.ShutdownTimeout - TimeProvider.GetElapsedTime(stopStarted);
        if (!finished.IsCompleted && (timeLeft == Timeout.InfiniteTimeSpan || timeLeft > TimeSpan.Zero))
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            var wait = timeLeft == Timeout.InfiniteTimeSpan
                ? Task.Delay(Timeout.InfiniteTimeSpan, timeout.Token)
                : Task.Delay(timeLeft, TimeProvider, timeout.Token);
            await LaneTasks.WhenEitherAsync(finished, wait);
#pragma warning disable VSTHRD103 // Cancel in the lane: CancelAsync would resume this stop path on the thread pool (see SettleAtStopAsync).
            timeout.Cancel();
#pragma warning restore VSTHRD103
        }

        return finished;
    }

    /// <summary>
    /// Ends one message that did not finish within the shutdown wait: renewals stop, then the message is abandoned
    /// (its handler is canceled) or, when a settlement is already under way (a slow or retrying complete, a
    /// dead-letter), that settlement is waited for. Either is bounded by the lock's expiry (the latest the broker may
    /// hold it, see <see cref="LeaseKeeper.LatestExpiry"/>): a settlement still
    /// unanswered then is aborted, reported (log event 32, <see cref="MessagePumpStatistics.UnsettledAtStop"/>) and
    /// counted as a lost lease, since the broker holds nothing for the message any more. Returns with the message out
    /// of the pump's books, even when its handler ignores its token and is still running.
    /// </summary>
    private async Task SettleAtStopAsync(PumpDelivery delivery)
    {
        Keeper.Release(delivery.Lease);
        var settlement = delivery.TryClaim() ? AbandonAtStopAsync(delivery) : delivery.SettleEnded;
        while (!settlement.IsCompleted)
        {
            // Read the lock each time: a renewal that was already under way when renewals stopped may have moved it.
            var untilExpiry = Keeper.LatestExpiry(delivery.Lease) - TimeProvider.GetUtcNow();
            if (untilExpiry <= TimeSpan.Zero)
            {
                await GiveUpAtExpiryAsync(delivery, settlement);
                break;
            }

            using var expiry = new CancellationTokenSource();
            await LaneTasks.WhenEitherAsync(settlement, Task.Delay(untilExpiry, TimeProvider, expiry.Token));

            // Cancel synchronously: CancelAsync completes on the thread pool, and while its continuation travels back
            // a virtual clock would jump ahead to the next timer.
#pragma warning disable VSTHRD103 // Cancel in the lane: CancelAsync would resume this stop path on the thread pool (see SettleAtStopAsync).
            expiry.Cancel();
#pragma warning restore VSTHRD103
        }

        Finish(delivery);
    }

    /// <summary>
    /// The lock expired with renewals stopped and the settlement still unanswered: the broker holds nothing for this
    /// delivery any more. Reports it, aborts the settle call (a call that honours its token ends at once and counts its
    /// own outcome), and after <see cref="MessagePumpOptions.TransientRetryDelay"/> counts the lease lost itself for a
    /// call that ignores its token; a late answer to that call changes no count.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The settlement is the pump's own settle call or its message's SettleEnded task (see SettleAtStopAsync). No JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    private async Task GiveUpAtExpiryAsync(PumpDelivery delivery, Task settlement)
    {
        _events.UnsettledAtStop(delivery.Message.MessageId, delivery.Message.LockedUntil);
        delivery.AbortSettlement();
        if (!settlement.IsCompleted)
        {
            using var grace = new CancellationTokenSource();
            await LaneTasks.WhenEitherAsync(settlement, Task.Delay(_options.TransientRetryDelay, TimeProvider, grace.Token));
#pragma warning disable VSTHRD103 // Cancel in the lane: CancelAsync would resume this stop path on the thread pool (see SettleAtStopAsync).
            grace.Cancel();
#pragma warning restore VSTHRD103
        }

        if (!settlement.IsCompleted)
        {
            OnLeaseLost(delivery, null, "settle", byLeaseKeeper: false);
        }
    }

    private async Task AbandonAtStopAsync(PumpDelivery delivery)
    {
        _events.AbandoningAtStop(delivery.Message.MessageId);
        delivery.CancelHandler();
        if (await SettleClaimedAsync(delivery, MessageSettlement.Abandon()))
        {
            _events.AbandonedAtStop();
        }
    }
}
