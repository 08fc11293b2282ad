namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
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
                _events.Settled(context.Message, settlement, reason);
                return true;
            case OperationCanceledException when context.IsSettleAborted:
            case LeaseLostException:
                // Lost, or the lock expired while the call was unanswered: the broker holds nothing for this delivery.
                OnLeaseLost(context, outcome, OperationName(settlement), byLeaseKeeper: false);
                return false;
            case TransientTransportException:
                return null;
            default:
                _events.SettleFailed(outcome, OperationName(settlement), context.Message.MessageId);
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
}
