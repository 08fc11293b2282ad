namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    private static readonly TimeSpan MaxDefaultRenewalBuffer = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan MinRetryDelay = TimeSpan.FromMilliseconds(1);

    /// <summary>
    /// How much lock time may remain at renewal: the option when set, otherwise min(half of the remaining lock, 10 s) —
    /// Azure Service Bus's rule — and in both cases at least three times the worst renew round trip observed lately
    /// (measured until the keeper runs again, so it includes the slice that was running when the answer came): a renewal
    /// sent later than that could not reach the broker before the lock ends.
    /// </summary>
    private TimeSpan RenewalBuffer(TimeSpan remaining)
    {
        if (remaining <= TimeSpan.Zero)
        {
            return TimeSpan.Zero;
        }

        var rule = _options.LockRenewalBuffer ?? TimeSpan.FromTicks(Math.Min(remaining.Ticks / 2, MaxDefaultRenewalBuffer.Ticks));
        var byRoundTrip = _renewRoundTrips.RequiredSlack;
        return byRoundTrip > rule ? byRoundTrip : rule;
    }

    /// <summary>Renews once alone, retrying transient failures while the lock lasts; false when the lease is lost or no longer kept.</summary>
    private async Task<bool> RenewAsync(MessageContext context, CancellationToken token)
    {
        while (true)
        {
            if (!context.IsRenewable)
            {
                return false; // settled (or the pump stopped renewing it) while a retry waited
            }

            var slack = context.Message.LockedUntil - TimeProvider.GetUtcNow();
            var sent = TimeProvider.GetTimestamp();
            try
            {
                await context.Message.RenewLockAsync(token);
                var roundTrip = TimeProvider.GetElapsedTime(sent);
                _renewRoundTrips.Record(roundTrip);
                CountRenewed(context, slack, roundTrip);
                return true;
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                throw;
            }
            catch (LeaseLostException ex)
            {
                OnLeaseLost(context, ex, "renew", byLeaseKeeper: true);
                return false;
            }
            catch (Exception ex)
            {
                if (await RetryDelayAsync(context, ex, "renew", token) is not true)
                {
                    OnLeaseLost(context, ex, "renew", byLeaseKeeper: true);
                    return false;
                }
            }
        }
    }

    /// <summary>Waits before a retry; false when the lock has no time left for one.</summary>
    private async Task<bool> RetryDelayAsync(MessageContext context, Exception failure, string operation, CancellationToken token)
    {
        var remaining = context.Message.LockedUntil - TimeProvider.GetUtcNow();
        var delay = TimeSpan.FromTicks(Math.Min(_options.TransientRetryDelay.Ticks, remaining.Ticks / 2));
        if (delay < MinRetryDelay)
        {
            return false;
        }

        Interlocked.Increment(ref _transientRetries);
        MessagePumpLog.TransientFailure(_logger, failure, Name, operation, context.Message.MessageId, delay);
        await Task.Delay(delay, TimeProvider, token);
        return true;
    }

    /// <summary>
    /// Records a lost lease once per delivery and cancels the handler. The lease keeper gives way to a settlement
    /// already under way: that settlement reports the loss itself if its own call finds the lease gone.
    /// </summary>
    private void OnLeaseLost(MessageContext context, Exception? exception, string operation, bool byLeaseKeeper)
    {
        if (byLeaseKeeper && !context.TryClaim())
        {
            return;
        }

        if (context.TryMarkLost())
        {
            Interlocked.Increment(ref _leasesLost);
            _telemetry.LeaseLost();
            MessagePumpLog.LeaseLost(_logger, exception, Name, context.Message.MessageId, operation);
        }

        context.CancelHandler();
        context.EndSettlement(); // nothing left to settle for this delivery
    }
}
