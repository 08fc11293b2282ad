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
}
