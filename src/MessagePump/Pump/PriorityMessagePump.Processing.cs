namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>
    /// Runs the handler in the processing lane (the first step of a message's processing, started by
    /// <see cref="MessageContext.StartProcessing"/> as tracked work of the processing lane). The steps are driven by the
    /// message's own context, not by an async method: no state machine, delegate or task per message when the handler
    /// and the settlement complete at once, and a continuation only when one of them does not.
    /// </summary>
    internal void RunHandler(MessageContext context)
    {
        Task? handled = null;
        try
        {
            context.ProcessStart = TimeProvider.GetTimestamp();
            context.ProcessSpan = _telemetry.StartProcess(context.Message); // Activity.Current inside the handler
            handled = _handler(context, context.CancellationToken)
                ?? throw new InvalidOperationException("The message handler returned null; it must return a task.");
        }
        catch (Exception ex)
        {
            context.ProcessFailure = ex;
        }

        if (handled is null || handled.IsCompleted)
        {
            OnHandled(context, handled);
        }
        else
        {
            context.ContinueWhenDone(handled, MessageContext.ProcessingStep.Handled);
        }
    }

    /// <summary>
    /// The handler has returned (<paramref name="handled"/> is its task, or <see langword="null"/> when it threw):
    /// records it, then settles in the lease lane.
    /// </summary>
    internal void OnHandled(MessageContext context, Task? handled)
    {
        try
        {
            if (handled is not null)
            {
                try
                {
#pragma warning disable VSTHRD002 // The task has completed (IsCompleted, or this is its continuation): nothing waits.
                    handled.GetAwaiter().GetResult(); // the handler's exception, as await would throw it
#pragma warning restore VSTHRD002
                }
                catch (Exception ex)
                {
                    context.ProcessFailure = ex;
                }
            }

            var failure = context.ProcessFailure;
            _telemetry.Processed(TimeProvider.GetElapsedTime(context.ProcessStart), failure);
            PumpTelemetry.StopProcess(context.ProcessSpan, failure);
            context.ProcessSpan = null;
        }
        finally
        {
            // Settling releases the lock: as urgent as keeping it.
            context.ContinueIn(LeaseLane, MessageContext.ProcessingStep.Settle);
        }
    }

    /// <summary>Settles the handled message, in the lease lane, unless it was claimed meanwhile; then finishes it.</summary>
    internal void Settle(MessageContext context)
    {
        Task<bool>? settling = null;
        try
        {
            if (context.IsClaimed)
            {
                // The lease was lost or the message was settled (dead-lettered by the handler, abandoned at stop).
            }
            else if (context.ProcessFailure is not { } failure)
            {
                settling = SettleAsync(context, Settlement.Complete);
            }
            else
            {
                Interlocked.Increment(ref _handlerFailures);
                MessagePumpLog.HandlerFailed(_logger, failure, Name, context.Message.MessageId, context.Message.DeliveryCount);
                settling = SettleAsync(context, Settlement.Abandon);
            }
        }
        finally
        {
            if (settling is null || settling.IsCompleted)
            {
                EndProcessing(context);
            }
            else
            {
                context.ContinueWhenDone(settling, MessageContext.ProcessingStep.Settled);
            }
        }
    }

    /// <summary>
    /// The last step: finishes the message and ends the processing lane's tracked work (a graceful stop of the
    /// scheduler waits for it, as for <see cref="Lane.Run(Func{Task})"/>).
    /// </summary>
    internal void EndProcessing(MessageContext context)
    {
        context.ProcessFailure = null;
        try
        {
            Finish(context);
        }
        finally
        {
            ProcessingLane.EndTracked();
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
