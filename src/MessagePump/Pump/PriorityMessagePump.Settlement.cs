using System.Runtime.ExceptionServices;

namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>Settles the message unless another settlement claimed it first; retries transient failures while the lock lasts.</summary>
    /// <returns>Whether this call settled the message.</returns>
    internal Task<bool> SettleAsync(MessageContext context, Settlement settlement, string? reason = null, string? description = null) =>
        context.TryClaim() ? SettleClaimedAsync(context, settlement, reason, description) : Task.FromResult(false);

    /// <summary>
    /// Settles the message for a settle call made on the message itself (<see cref="IPumpRoutedMessage"/>), under the
    /// same claim, retries and counts as <see cref="SettleAsync"/>, and fails as <see cref="ILeasedMessage"/>'s calls do.
    /// </summary>
    /// <returns>A task that completes when the message is settled.</returns>
    /// <exception cref="LeaseLostException">The message was already settled (claimed by another settlement), or its lease is lost.</exception>
    /// <exception cref="Exception">The broker refused the settlement for good: its own exception, as the pump logged it.</exception>
    internal async Task SettleForMessageAsync(MessageContext context, Settlement settlement, string? reason, string? description)
    {
        if (!context.TryClaim())
        {
            throw new LeaseLostException(context.LeaseState == MessageLeaseState.Lost
                ? $"Cannot {OperationName(settlement)} {context.Message.MessageId}: its lease was lost."
                : $"Cannot {OperationName(settlement)} {context.Message.MessageId}: it was already settled.");
        }

        if (await SettleClaimedAsync(context, settlement, reason, description))
        {
            return;
        }

        if (context.SettleFailure is { } failure)
        {
            ExceptionDispatchInfo.Throw(failure);
        }

        throw new LeaseLostException($"Cannot {OperationName(settlement)} {context.Message.MessageId}: its lease was lost.");
    }

    /// <summary>
    /// Settles a message whose settlement the caller has claimed. Each call gets
    /// <see cref="MessageContext.SettleAbortToken"/>, which the stop path cancels when the message's lock expired with
    /// renewals stopped; by then the stop path has counted the lease lost, so a late answer changes no count.
    /// </summary>
    /// <returns>Whether the message was settled.</returns>
    private async Task<bool> SettleClaimedAsync(MessageContext context, Settlement settlement, string? reason = null, string? description = null)
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

            return await SettleWithRetriesAsync(context, settlement, reason, description);
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
                context.SettleFailure = outcome;
                _events.SettleFailed(outcome, OperationName(settlement), context.Message.MessageId);
                return false;
        }
    }

    private static string OperationName(Settlement settlement) => settlement switch
    {
        Settlement.Complete => "complete",
        Settlement.Abandon => "abandon",
        Settlement.Defer => "defer",
        _ => "dead-letter",
    };

    private async Task<bool> SettleWithRetriesAsync(MessageContext context, Settlement settlement, string? reason, string? description)
    {
        var abort = context.SettleAbortToken;
        while (true)
        {
            Exception? outcome = null;
            try
            {
                await SendSettlementAsync(context.Message, settlement, reason, description, abort);
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

    /// <summary>
    /// One settle call to the transport: a pump-owned message's own call (<see cref="IPumpRoutedMessage.SettleDirectAsync"/>,
    /// which does not come back through the pump), otherwise the <see cref="ILeasedMessage"/> call.
    /// </summary>
    private static Task SendSettlementAsync(ILeasedMessage message, Settlement settlement, string? reason, string? description, CancellationToken abort)
    {
        if (message is IPumpRoutedMessage routed)
        {
            return routed.SettleDirectAsync(settlement, reason, description, abort);
        }

        return settlement switch
        {
            Settlement.Complete => message.CompleteAsync(abort),
            Settlement.Abandon => message.AbandonAsync(abort),
            Settlement.Defer => Task.FromException(new NotSupportedException($"{message.GetType().Name} cannot be deferred: only a transport's own message type offers defer.")),
            _ when description is null => message.DeadLetterAsync(reason!, abort),
            _ => message.DeadLetterAsync(reason!, description, abort),
        };
    }

    /// <summary>Waits before retrying a settle call; false when the lock has no time left or the settlement was aborted.</summary>
    private async Task<bool> SettleRetryDelayAsync(MessageContext context, Exception failure, string operation, CancellationToken abort)
    {
        try
        {
            return await Keeper.RetryDelayAsync(context.Message, failure, operation, abort);
        }
        catch (OperationCanceledException) when (abort.IsCancellationRequested)
        {
            return false;
        }
    }

    /// <summary>The keeper found a lease lost (a renewal refused, or out of lock time): the lost-lease path below.</summary>
    private void OnKeeperFoundLeaseLost(LeaseHandle lease, Exception? exception)
    {
        System.Diagnostics.Debug.Assert(lease.Context is not null, "Every lease of the pump's keeper belongs to one of its messages.");
        OnLeaseLost(lease.Context, exception, "renew", byLeaseKeeper: true);
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
            _events.LeaseLost(exception, context.Message.MessageId, operation);
        }

        context.CancelHandler();
        context.EndSettlement(); // nothing left to settle for this delivery
    }
}
