using System.Diagnostics;

namespace PriorityAsync.Messaging;

public sealed partial class MessagePump
{
    /// <summary>Runs the handler in the processing lane, then settles the message in the lease lane.</summary>
    private async Task ProcessAsync(MessageContext context)
    {
        try
        {
            var start = TimeProvider.GetTimestamp();
            Exception? failure = null;
            try
            {
                await _handler(context, context.CancellationToken);
            }
            catch (Exception ex)
            {
                failure = ex;
            }

            RecordDuration(start, failure);

            // Settling releases the lock: as urgent as keeping it.
            await LeaseLane.SwitchTo();
            if (context.IsClaimed)
            {
                // The lease was lost or the message was settled (dead-lettered by the handler, abandoned at stop).
                return;
            }

            if (failure is null)
            {
                await SettleAsync(context, Settlement.Complete);
                return;
            }

            Interlocked.Increment(ref _handlerFailures);
            MessagePumpLog.HandlerFailed(_logger, failure, Name, context.Message.MessageId, context.Message.DeliveryCount);
            await SettleAsync(context, Settlement.Abandon);
        }
        finally
        {
            Finish(context);
        }
    }

    /// <summary>Settles the message unless another settlement claimed it first; retries transient failures while the lock lasts.</summary>
    /// <returns>Whether this call settled the message.</returns>
    internal Task<bool> SettleAsync(MessageContext context, Settlement settlement, string? reason = null) =>
        context.TryClaim() ? SettleClaimedAsync(context, settlement, reason) : Task.FromResult(false);

    /// <summary>Settles a message whose settlement the caller has claimed.</summary>
    /// <returns>Whether the message was settled.</returns>
    private async Task<bool> SettleClaimedAsync(MessageContext context, Settlement settlement, string? reason = null)
    {
        var operation = settlement switch
        {
            Settlement.Complete => "complete",
            Settlement.Abandon => "abandon",
            _ => "dead-letter",
        };
        while (true)
        {
            try
            {
                await (settlement switch
                {
                    Settlement.Complete => context.Message.CompleteAsync(),
                    Settlement.Abandon => context.Message.AbandonAsync(),
                    _ => context.Message.DeadLetterAsync(reason!),
                });
                CountSettled(context, settlement, reason);
                return true;
            }
            catch (LeaseLostException ex)
            {
                OnLeaseLost(context, ex, operation, byLeaseKeeper: false);
                return false;
            }
            catch (TransientTransportException ex)
            {
                if (!await RetryDelayAsync(context, ex, operation, CancellationToken.None))
                {
                    OnLeaseLost(context, ex, operation, byLeaseKeeper: false);
                    return false;
                }
            }
            catch (Exception ex)
            {
                Interlocked.Increment(ref _settleFailures);
                MessagePumpLog.SettleFailed(_logger, ex, Name, operation, context.Message.MessageId);
                return false;
            }
        }
    }

    private void CountSettled(MessageContext context, Settlement settlement, string? reason)
    {
        var tags = MessagePumpMetrics.Tags(Name);
        switch (settlement)
        {
            case Settlement.Complete:
                Interlocked.Increment(ref _completed);
                MessagePumpMetrics.Completed.Add(1, tags);
                MessagePumpLog.Completed(_logger, Name, context.Message.MessageId);
                break;
            case Settlement.Abandon:
                Interlocked.Increment(ref _abandoned);
                MessagePumpMetrics.Abandoned.Add(1, tags);
                MessagePumpLog.Abandoned(_logger, Name, context.Message.MessageId);
                break;
            default:
                Interlocked.Increment(ref _deadLettered);
                MessagePumpMetrics.DeadLettered.Add(1, tags);
                MessagePumpLog.DeadLettered(_logger, Name, context.Message.MessageId, reason!);
                break;
        }
    }

    private void RecordDuration(long start, Exception? failure)
    {
        if (!MessagePumpMetrics.ProcessDuration.Enabled)
        {
            return;
        }

        var tags = MessagePumpMetrics.Tags(Name);
        if (failure is not null)
        {
            tags.Add(MessagePumpMetrics.ErrorTypeTag, failure.GetType().FullName);
        }

        MessagePumpMetrics.ProcessDuration.Record(TimeProvider.GetElapsedTime(start).TotalSeconds, tags);
    }

    /// <summary>Stops the lease keeper, frees the slot and wakes the receive loop.</summary>
    private void Finish(MessageContext context)
    {
        context.Finish();
        lock (_gate)
        {
            _inFlight.Remove(context);
            SignalCapacityLocked();
        }

        MessagePumpMetrics.InFlight.Add(-1, MessagePumpMetrics.Tags(Name));
    }
}
