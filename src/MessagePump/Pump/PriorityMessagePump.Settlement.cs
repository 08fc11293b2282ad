using System.Runtime.ExceptionServices;

namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>Settles the message unless another settlement claimed it first; retries transient failures while the lock lasts.</summary>
    /// <returns>Whether this call settled the message.</returns>
    internal Task<bool> SettleAsync(PumpDelivery delivery, MessageSettlement settlement) =>
        delivery.TryClaim() ? SettleClaimedAsync(delivery, settlement) : Task.FromResult(false);

    /// <summary>
    /// Settles the message for a settle call made on the message itself (<see cref="ISettleableMessage"/>, through <see cref="ISettlementOwner"/>), under the
    /// same claim, retries and counts as <see cref="SettleAsync"/>, and fails as <see cref="ILeasedMessage"/>'s calls do.
    /// </summary>
    /// <returns>A task that completes when the message is settled.</returns>
    /// <exception cref="LeaseLostException">The message was already settled (claimed by another settlement), or its lease is lost.</exception>
    /// <exception cref="Exception">The broker refused the settlement for good: its own exception, as the pump logged it.</exception>
    internal async Task SettleForMessageAsync(PumpDelivery delivery, MessageSettlement settlement)
    {
        if (!delivery.TryClaim())
        {
            throw new LeaseLostException(delivery.LeaseState == MessageLeaseState.Lost
                ? $"Cannot {settlement} {delivery.Message.MessageId}: its lease was lost."
                : $"Cannot {settlement} {delivery.Message.MessageId}: it was already settled.");
        }

        if (await SettleClaimedAsync(delivery, settlement))
        {
            return;
        }

        if (delivery.SettleFailure is { } failure)
        {
            ExceptionDispatchInfo.Throw(failure);
        }

        throw new LeaseLostException($"Cannot {settlement} {delivery.Message.MessageId}: its lease was lost.");
    }

    /// <summary>
    /// Settles a message whose settlement the caller has claimed. Each call gets
    /// <see cref="PumpDelivery.SettleAbortToken"/>, which the stop path cancels when the message's lock expired with
    /// renewals stopped; by then the stop path has counted the lease lost, so a late answer changes no count.
    /// </summary>
    /// <returns>Whether the message was settled.</returns>
    private async Task<bool> SettleClaimedAsync(PumpDelivery delivery, MessageSettlement settlement)
    {
        // The settlement ends the lease: no renewal goes out once it has begun (a renewal racing the settle call is
        // answered lock-lost by a broker that settled first, and costs a call for nothing).
        Keeper.Release(delivery.Lease);
        try
        {
            if (settlement.Kind == SettlementKind.Complete && _completions is { } batcher)
            {
                var outcome = await batcher.CompleteAsync(delivery);
                if (IsAnswerAboutTheMessage(outcome, delivery.IsSettleAborted))
                {
                    if (ApplySettleOutcome(delivery, settlement, outcome, SettlementOutcome.Confirmed) is { } settled)
                    {
                        return settled;
                    }

                    // Transient for this message: retry it alone, under the single call's retry rule.
                    if (!await SettleRetryDelayAsync(delivery, outcome!, "complete", delivery.SettleAbortToken))
                    {
                        OnLeaseLost(delivery, outcome!, "complete", byLeaseKeeper: false);
                        return false;
                    }
                }

                // Otherwise the batch call broke as a whole (a transport that broke its contract): retry the message alone.
            }

            return await SettleWithRetriesAsync(delivery, settlement);
        }
        finally
        {
            delivery.EndSettlement();
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
    private bool? ApplySettleOutcome(PumpDelivery delivery, MessageSettlement settlement, Exception? outcome, SettlementOutcome answer)
    {
        switch (outcome)
        {
            case null when delivery.LeaseState == MessageLeaseState.Lost:
                return false; // answered after the stop path had given up on it and counted the lease lost
            case null:
                _events.Settled(delivery.Message, settlement, answer);
                return true;
            case OperationCanceledException when delivery.IsSettleAborted:
            case LeaseLostException:
                // Lost, or the lock expired while the call was unanswered: the broker holds nothing for this delivery.
                OnLeaseLost(delivery, outcome, settlement.ToString(), byLeaseKeeper: false);
                return false;
            case TransientTransportException:
                return null;
            default:
                delivery.SettleFailure = outcome;
                _events.SettleFailed(outcome, settlement.ToString(), delivery.Message.MessageId);
                return false;
        }
    }

    private async Task<bool> SettleWithRetriesAsync(PumpDelivery delivery, MessageSettlement settlement)
    {
        var abort = delivery.SettleAbortToken;
        while (true)
        {
            Exception? outcome = null;
            var answer = SettlementOutcome.Confirmed;
            try
            {
                answer = await MessageSourceDefaults.SettleAsync(delivery.Message, settlement, abort);
            }
            catch (Exception ex)
            {
                outcome = ex;
            }

            if (ApplySettleOutcome(delivery, settlement, outcome, answer) is { } settled)
            {
                return settled;
            }

            if (!await SettleRetryDelayAsync(delivery, outcome!, settlement.ToString(), abort))
            {
                OnLeaseLost(delivery, outcome!, settlement.ToString(), byLeaseKeeper: false);
                return false;
            }
        }
    }

    /// <summary>Waits before retrying a settle call; false when the lock has no time left or the settlement was aborted.</summary>
    private async Task<bool> SettleRetryDelayAsync(PumpDelivery delivery, Exception failure, string operation, CancellationToken abort)
    {
        try
        {
            return await Keeper.RetryDelayAsync(delivery.Message, failure, operation, abort);
        }
        catch (OperationCanceledException) when (abort.IsCancellationRequested)
        {
            return false;
        }
    }

    /// <summary>
    /// A message reached the processing lane with its lock gone: it is not handed to its handler, and its lease is lost
    /// (the lost-lease path below, unless the keeper or a settlement claimed it first).
    /// </summary>
    internal void LostAtHandOff(PumpDelivery delivery)
    {
        Keeper.Release(delivery.Lease);
        OnLeaseLost(
            delivery,
            new LeaseLostException($"The lock of message {delivery.Message.MessageId} ran out at {delivery.Message.LockedUntil:O}, before it reached its handler: the handler is not called."),
            "hand-off",
            byLeaseKeeper: true);
    }

    /// <summary>The keeper found a lease lost (a renewal refused, or out of lock time): the lost-lease path below.</summary>
    private void OnKeeperFoundLeaseLost(LeaseHandle lease, Exception? exception)
    {
        System.Diagnostics.Debug.Assert(lease.Delivery is not null, "Every lease of the pump's keeper belongs to one of its messages.");
        OnLeaseLost(lease.Delivery, exception, "renew", byLeaseKeeper: true);
    }

    /// <summary>
    /// Records a lost lease once per delivery and cancels the handler. The lease keeper gives way to a settlement
    /// already under way: that settlement reports the loss itself if its own call finds the lease gone.
    /// </summary>
    private void OnLeaseLost(PumpDelivery delivery, Exception? exception, string operation, bool byLeaseKeeper)
    {
        if (byLeaseKeeper && !delivery.TryClaim())
        {
            return;
        }

        if (delivery.TryMarkLost())
        {
            _events.LeaseLost(exception, delivery.Message.MessageId, operation);
            if (!delivery.IsHandedOff)
            {
                _events.ExpiredAtHandOff(); // lost before its handler started: it never runs
            }
        }

        delivery.CancelHandler();
        delivery.EndSettlement(); // nothing left to settle for this delivery
    }
}
