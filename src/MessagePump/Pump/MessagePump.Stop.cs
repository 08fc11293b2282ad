namespace PriorityAsync.Messaging;

public sealed partial class MessagePump
{
    private async Task RunStopAsync(TaskCompletionSource stopped, CancellationToken cancellationToken)
    {
        try
        {
            await StopCoreAsync(cancellationToken);
            stopped.TrySetResult();
        }
        catch (Exception ex)
        {
            stopped.TrySetException(ex);
        }
    }

    private async Task StopCoreAsync(CancellationToken cancellationToken)
    {
        if (_state == State.Stopped)
        {
            return;
        }

        _receiveCancellation.Cancel();
        MessageContext[] inFlight;
        lock (_gate)
        {
            SignalCapacityLocked();
        }

        await _receiveLoop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
        lock (_gate)
        {
            inFlight = [.. _inFlight];
        }

        MessagePumpLog.Stopping(_logger, Name, inFlight.Length, _options.ShutdownTimeout);
        var finished = Task.WhenAll(inFlight.Select(m => m.Finished));
        if (!finished.IsCompleted && _options.ShutdownTimeout != TimeSpan.Zero)
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            var wait = _options.ShutdownTimeout == Timeout.InfiniteTimeSpan
                ? Task.Delay(Timeout.InfiniteTimeSpan, timeout.Token)
                : Task.Delay(_options.ShutdownTimeout, TimeProvider, timeout.Token);
            await Task.WhenAny(finished, wait);
            timeout.Cancel();
        }

        if (!finished.IsCompleted)
        {
            var abandons = inFlight.Where(m => !m.Finished.IsCompleted).Select(m => LeaseLane.Run(() => AbandonAtStopAsync(m)));
            await Task.WhenAll(abandons.ToArray());
        }

        lock (_gate)
        {
            _state = State.Stopped;
        }

        var s = GetStatistics();
        MessagePumpLog.Stopped(_logger, Name, s.Received, s.Completed, s.Abandoned, s.DeadLettered, s.LeasesLost);
    }

    private async Task AbandonAtStopAsync(MessageContext context)
    {
        if (!context.TryClaim())
        {
            // The handler's settlement is under way (a slow or retrying complete), or the lease is already lost.
            await WaitForSettlementAtStopAsync(context);
            return;
        }

        MessagePumpLog.AbandoningAtStop(_logger, Name, context.Message.MessageId);
        context.CancelHandler();
        if (await SettleClaimedAsync(context, Settlement.Abandon))
        {
            Interlocked.Increment(ref _abandonedAtStop);
        }

        // The handler may ignore its token: stop renewing now, the lock is released.
        context.Finish();
    }

    /// <summary>
    /// Waits for a settlement that another path claimed, at most until the message's lock expires: after that the
    /// broker holds nothing for it whatever the settlement does. A settlement still unfinished then is reported.
    /// </summary>
    private async Task WaitForSettlementAtStopAsync(MessageContext context)
    {
        if (context.LeaseState == MessageLeaseState.Lost || context.Finished.IsCompleted)
        {
            return;
        }

        var untilExpiry = context.Message.LockedUntil - TimeProvider.GetUtcNow();
        if (untilExpiry > TimeSpan.Zero)
        {
            using var expiry = new CancellationTokenSource();
            var lockExpired = Task.Delay(untilExpiry, TimeProvider, expiry.Token);
            await Task.WhenAny(context.Finished, lockExpired);
            await expiry.CancelAsync();
        }

        if (!context.Finished.IsCompleted)
        {
            Interlocked.Increment(ref _unsettledAtStop);
            MessagePumpLog.UnsettledAtStop(_logger, Name, context.Message.MessageId, context.Message.LockedUntil);
        }
    }
}
