namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>Runs the handler in the processing lane, then settles the message in the lease lane.</summary>
    private async Task ProcessAsync(MessageContext context)
    {
        try
        {
            var start = TimeProvider.GetTimestamp();
            Exception? failure = null;
            var span = _telemetry.StartProcess(context.Message); // Activity.Current inside the handler
            try
            {
                await _handler(context, context.CancellationToken);
            }
            catch (Exception ex)
            {
                failure = ex;
            }

            _telemetry.Processed(TimeProvider.GetElapsedTime(start), failure);
            PumpTelemetry.StopProcess(span, failure);

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

    /// <summary>
    /// Settles a message whose settlement the caller has claimed. Each call gets
    /// <see cref="MessageContext.SettleAbortToken"/>, which the stop path cancels when the message's lock expired with
    /// renewals stopped; by then the stop path has counted the lease lost, so a late answer changes no count.
    /// </summary>
    /// <returns>Whether the message was settled.</returns>
    private async Task<bool> SettleClaimedAsync(MessageContext context, Settlement settlement, string? reason = null)
    {
        try
        {
            if (settlement == Settlement.Complete && _completions is { } batcher)
            {
                var outcome = await batcher.CompleteAsync(context);
                if (SettledInBatch(context, outcome) is { } settled)
                {
                    return settled;
                }

                // The batch call failed for this message as a whole (a transient failure, a broken transport): retry it
                // alone, under the single call's retry rule.
                if (outcome is TransientTransportException transient
                    && !await SettleRetryDelayAsync(context, transient, "complete", context.SettleAbortToken))
                {
                    OnLeaseLost(context, transient, "complete", byLeaseKeeper: false);
                    return false;
                }
            }

            return await SettleWithRetriesAsync(context, settlement, reason);
        }
        finally
        {
            context.EndSettlement();
        }
    }

    /// <summary>Applies a batch outcome: whether the message was completed, or <see langword="null"/> to retry it alone.</summary>
    private bool? SettledInBatch(MessageContext context, Exception? outcome)
    {
        switch (outcome)
        {
            case null when context.LeaseState == MessageLeaseState.Lost:
                return false; // answered after the stop path had given up on it at the lock's expiry
            case null:
                CountSettled(context, Settlement.Complete, reason: null);
                return true;
            case OperationCanceledException when context.SettleAbortToken.IsCancellationRequested:
            case LeaseLostException:
                OnLeaseLost(context, outcome, "complete", byLeaseKeeper: false);
                return false;
            default:
                return null;
        }
    }

    private async Task<bool> SettleWithRetriesAsync(MessageContext context, Settlement settlement, string? reason)
    {
        var operation = settlement switch
        {
            Settlement.Complete => "complete",
            Settlement.Abandon => "abandon",
            _ => "dead-letter",
        };
        var abort = context.SettleAbortToken;
        while (true)
        {
            Exception transient;
            try
            {
                await (settlement switch
                {
                    Settlement.Complete => context.Message.CompleteAsync(abort),
                    Settlement.Abandon => context.Message.AbandonAsync(abort),
                    _ => context.Message.DeadLetterAsync(reason!, abort),
                });
                if (context.LeaseState == MessageLeaseState.Lost)
                {
                    // Answered after the stop path had given up on it at the lock's expiry and counted the lease lost.
                    return false;
                }

                CountSettled(context, settlement, reason);
                return true;
            }
            catch (OperationCanceledException ex) when (abort.IsCancellationRequested)
            {
                // The lock expired while the call was unanswered: the broker holds nothing for this delivery any more.
                OnLeaseLost(context, ex, operation, byLeaseKeeper: false);
                return false;
            }
            catch (LeaseLostException ex)
            {
                OnLeaseLost(context, ex, operation, byLeaseKeeper: false);
                return false;
            }
            catch (TransientTransportException ex)
            {
                transient = ex;
            }
            catch (Exception ex)
            {
                Interlocked.Increment(ref _settleFailures);
                MessagePumpLog.SettleFailed(_logger, ex, Name, operation, context.Message.MessageId);
                return false;
            }

            if (!await SettleRetryDelayAsync(context, transient, operation, abort))
            {
                OnLeaseLost(context, transient, operation, byLeaseKeeper: false);
                return false;
            }
        }
    }

    /// <summary>Waits before retrying a settle call; false when the lock has no time left or the settlement was aborted.</summary>
    private async Task<bool> SettleRetryDelayAsync(MessageContext context, Exception failure, string operation, CancellationToken abort)
    {
        try
        {
            return await RetryDelayAsync(context, failure, operation, abort);
        }
        catch (OperationCanceledException) when (abort.IsCancellationRequested)
        {
            return false;
        }
    }

    private void CountSettled(MessageContext context, Settlement settlement, string? reason)
    {
        _telemetry.Settled(settlement);
        switch (settlement)
        {
            case Settlement.Complete:
                Interlocked.Increment(ref _completed);
                MessagePumpLog.Completed(_logger, Name, context.Message.MessageId);
                break;
            case Settlement.Abandon:
                Interlocked.Increment(ref _abandoned);
                MessagePumpLog.Abandoned(_logger, Name, context.Message.MessageId);
                break;
            default:
                Interlocked.Increment(ref _deadLettered);
                MessagePumpLog.DeadLettered(_logger, Name, context.Message.MessageId, reason!);
                break;
        }
    }

    /// <summary>
    /// Stops the lease keeper, frees the slot and wakes the receive loop. Called once the message is settled (by the
    /// handler's path, or by the stop path for a handler still running); only the first call counts.
    /// </summary>
    private void Finish(MessageContext context)
    {
        context.Finish();
        bool removed;
        lock (_gate)
        {
            removed = _inFlight.Remove(context);
            SignalCapacityLocked();
        }

        if (removed)
        {
            _telemetry.Finished();
        }
    }
}
