namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>
    /// Runs the handler in the processing lane, then settles the message in the lease lane. Started by
    /// <see cref="MessageContext.StartProcessing"/> as tracked work of the processing lane, which it ends when done.
    /// </summary>
    internal async Task ProcessAsync(MessageContext context)
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
            try
            {
                Finish(context);
            }
            finally
            {
                ProcessingLane.EndTracked(); // a graceful stop of the scheduler waits for this, as for Lane.Run
            }
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
                if (IsAnswerAboutTheMessage(outcome, context.IsSettleAborted))
                {
                    if (ApplySettleOutcome(context, settlement, reason, outcome) is { } settled)
                    {
                        return settled;
                    }

                    // Transient for this message: retry it alone, under the single call's retry rule.
                    if (!await SettleRetryDelayAsync(context, outcome!, "complete", context.SettleAbortToken))
                    {
                        OnLeaseLost(context, outcome!, "complete", byLeaseKeeper: false);
                        return false;
                    }
                }

                // Otherwise the batch call broke as a whole (a transport that broke its contract): retry the message alone.
            }

            return await SettleWithRetriesAsync(context, settlement, reason);
        }
        finally
        {
            context.EndSettlement();
        }
    }

    /// <summary>
    /// Whether a batch call's outcome for one message is an answer about that message (settled, lease lost, aborted at
    /// the lock's expiry, or transient), which <see cref="ApplySettleOutcome"/> applies like a single call's; anything
    /// else means the batch call itself broke, and the message is retried alone.
    /// </summary>
    private static bool IsAnswerAboutTheMessage(Exception? outcome, bool aborted) => outcome switch
    {
        null or LeaseLostException or TransientTransportException => true,
        OperationCanceledException => aborted,
        _ => false,
    };

    /// <summary>
    /// Applies the answer of one settle call, single or batched, the one place its rules live: <see langword="true"/>
    /// when the message was settled and counted, <see langword="false"/> when its lease was lost (also when the answer
    /// came after the stop path had given up on it at the lock's expiry) or the call failed for good, and
    /// <see langword="null"/> for a transient failure the caller retries.
    /// </summary>
    private bool? ApplySettleOutcome(MessageContext context, Settlement settlement, string? reason, Exception? outcome)
    {
        switch (outcome)
        {
            case null when context.LeaseState == MessageLeaseState.Lost:
                return false; // answered after the stop path had given up on it and counted the lease lost
            case null:
                CountSettled(context, settlement, reason);
                return true;
            case OperationCanceledException when context.IsSettleAborted:
            case LeaseLostException:
                // Lost, or the lock expired while the call was unanswered: the broker holds nothing for this delivery.
                OnLeaseLost(context, outcome, OperationName(settlement), byLeaseKeeper: false);
                return false;
            case TransientTransportException:
                return null;
            default:
                Interlocked.Increment(ref _settleFailures);
                MessagePumpLog.SettleFailed(_logger, outcome, Name, OperationName(settlement), context.Message.MessageId);
                return false;
        }
    }

    private static string OperationName(Settlement settlement) => settlement switch
    {
        Settlement.Complete => "complete",
        Settlement.Abandon => "abandon",
        _ => "dead-letter",
    };

    private async Task<bool> SettleWithRetriesAsync(MessageContext context, Settlement settlement, string? reason)
    {
        var abort = context.SettleAbortToken;
        while (true)
        {
            Exception? outcome = null;
            try
            {
                await (settlement switch
                {
                    Settlement.Complete => context.Message.CompleteAsync(abort),
                    Settlement.Abandon => context.Message.AbandonAsync(abort),
                    _ => context.Message.DeadLetterAsync(reason!, abort),
                });
            }
            catch (Exception ex)
            {
                outcome = ex;
            }

            if (ApplySettleOutcome(context, settlement, reason, outcome) is { } settled)
            {
                return settled;
            }

            if (!await SettleRetryDelayAsync(context, outcome!, OperationName(settlement), abort))
            {
                OnLeaseLost(context, outcome!, OperationName(settlement), byLeaseKeeper: false);
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
    /// Drops the message's lease from the keeper's schedule, frees the slot and wakes the receive loop. Called once the message is settled (by the
    /// handler's path, or by the stop path for a handler still running); only the first call counts.
    /// </summary>
    private void Finish(MessageContext context)
    {
        context.Finish();
        bool removed;
        lock (_gate)
        {
            _schedule.Remove(context); // the lease is dropped the moment the message is settled
            removed = _inFlight.Remove(context);
            SignalCapacityLocked();
        }

        if (removed)
        {
            _telemetry.Finished();
        }
    }
}
