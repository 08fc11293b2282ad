namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>
    /// Renews the leases that fell due together in one <see cref="IMessageSource.RenewBatchAsync"/> and applies each
    /// outcome as a single renewal's: renewed (scheduled again), lost (<see cref="OnLeaseLost"/>), or — for a transient
    /// failure, a failed call, or an answer that breaks the contract (reported) — renewed again alone under the single
    /// renewal's retry rule. <paramref name="firstSent"/> is when the keeper sent them (a timestamp): it tells a stale
    /// answer from the newest (see <see cref="RenewalLost"/>).
    /// </summary>
    private async Task RenewDueAsync(MessageContext[] due, long firstSent)
    {
        var token = _keeperStop.Token;
        try
        {
            while (due.Length > 0)
            {
                var messages = new ILeasedMessage[due.Length];
                var slack = new TimeSpan[due.Length];
                var now = TimeProvider.GetUtcNow();
                for (var i = 0; i < due.Length; i++)
                {
                    messages[i] = due[i].Message;
                    slack[i] = due[i].Message.LockedUntil - now;
                }

                var sent = TimeProvider.GetTimestamp();
                IReadOnlyList<LeaseRenewal>? outcomes = null;
                Exception? failure = null;
                try
                {
                    outcomes = await _source.RenewBatchAsync(messages, token);
                }
                catch (Exception ex) when (!token.IsCancellationRequested)
                {
                    failure = ex;
                }

                token.ThrowIfCancellationRequested(); // the pump has stopped: nothing is in flight any more
                if (failure is null)
                {
                    ApplyRenewals(due, outcomes, slack, now, TimeProvider.GetElapsedTime(sent), firstSent);
                    return;
                }

                due = await RetryBatchAfterDelayAsync(due, failure, firstSent, token);
            }
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            // The pump has stopped.
        }
    }

    /// <summary>
    /// After a failed batch call: the leases with time left for a retry (half their remaining lock, as for a single
    /// renewal, at least <see cref="MinRetryDelay"/>) are renewed again together after the retry delay (one retry,
    /// counted and logged once); the others are lost.
    /// </summary>
    private async Task<MessageContext[]> RetryBatchAfterDelayAsync(MessageContext[] due, Exception failure, long firstSent, CancellationToken token)
    {
        var now = TimeProvider.GetUtcNow();
        var delay = _options.TransientRetryDelay;
        var kept = new List<MessageContext>(due.Length);
        foreach (var context in due)
        {
            DropHedge(context, firstSent);
            if (!context.IsRenewable)
            {
                continue;
            }

            var half = TimeSpan.FromTicks((context.Message.LockedUntil - now).Ticks / 2);
            if (half < MinRetryDelay)
            {
                RenewalLost(context, failure, firstSent);
                continue;
            }

            delay = half < delay ? half : delay;
            kept.Add(context);
        }

        if (kept.Count == 0)
        {
            return [];
        }

        var ids = kept.Count == 1 ? kept[0].Message.MessageId : $"{kept[0].Message.MessageId} and {kept.Count - 1} more";
        _events.TransientFailure(failure, "renew", ids, delay);
        await Task.Delay(delay, TimeProvider, token);
        return [.. kept.Where(c => c.IsRenewable)];
    }

    /// <summary>Applies the answer of a batch call; an answer of the wrong length is reported and each lease renewed alone.</summary>
    private void ApplyRenewals(MessageContext[] due, IReadOnlyList<LeaseRenewal>? outcomes, TimeSpan[] slack, DateTimeOffset sentAt, TimeSpan roundTrip, long firstSent)
    {
        if (outcomes is null || outcomes.Count != due.Length)
        {
            ReportBrokenRenewal($"{_source.GetType().Name}.RenewBatchAsync answered {outcomes?.Count.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "null"} outcomes for {due.Length} messages; it must answer one per message, in order. Each lease is renewed alone.");
            foreach (var context in due)
            {
                _ = RenewAloneAsync(context, null, firstSent);
            }

            return;
        }

        var requestLeg = TimeSpan.Zero;
        foreach (var outcome in outcomes)
        {
            if (outcome.Failure is null && RequestLeg(outcome.LockedUntil, sentAt, roundTrip) is var leg && leg > requestLeg)
            {
                requestLeg = leg;
            }
        }

        _renewRoundTrips.Record(roundTrip, requestLeg);
        for (var i = 0; i < due.Length; i++)
        {
            ApplyRenewal(due[i], outcomes[i], i, slack[i], roundTrip, firstSent);
        }
    }

    /// <summary>
    /// Applies one message's outcome of a batch renewal as a single renewal's. While another renewal of the lease is
    /// under way, or was sent after this one, the answer's expiry may differ from the message's (answers of hedged
    /// renewals cross): only an answer without such a sibling must match.
    /// </summary>
    private void ApplyRenewal(MessageContext context, LeaseRenewal outcome, int index, TimeSpan slack, TimeSpan roundTrip, long firstSent)
    {
        switch (outcome.Failure)
        {
            case null when outcome.LockedUntil != context.Message.LockedUntil && !HasSiblingRenewal(context, firstSent):
                ReportBrokenRenewal($"{_source.GetType().Name}.RenewBatchAsync answered 'renewed until {outcome.LockedUntil:O}' at index {index}, but that message ({context.Message.MessageId}) reports LockedUntil {context.Message.LockedUntil:O}: the answer is not about it. It is renewed alone.");
                _ = RenewAloneAsync(context, null, firstSent);
                break;
            case null:
                _events.Renewed(context, slack, roundTrip);
                RenewalAnswered(context);
                break;
            case LeaseLostException lost:
                RenewalLost(context, lost, firstSent);
                break;
            case TransientTransportException transient:
                _ = RenewAloneAsync(context, transient, firstSent);
                break;
            default:
                ReportBrokenRenewal($"{_source.GetType().Name}.RenewBatchAsync answered {outcome.Failure.GetType().Name} at index {index} ({context.Message.MessageId}); a failure must be a LeaseLostException or a TransientTransportException. It is renewed alone.", outcome.Failure);
                _ = RenewAloneAsync(context, null, firstSent);
                break;
        }
    }

    /// <summary>Reports a batch renewal that broke its contract (log event 34).</summary>
    private InvalidOperationException ReportBrokenRenewal(string message, Exception? inner = null)
    {
        var broken = new InvalidOperationException(message, inner);
        _events.BatchRenewalBroken(broken);
        return broken;
    }

    /// <summary>
    /// Renews one lease alone: after the retry delay when <paramref name="transient"/>
    /// is the failure of its batch's call or answer for it (at once when null), retrying while the lock lasts; scheduled
    /// again when renewed. It carries on the renew call the keeper sent at <paramref name="firstSent"/>.
    /// </summary>
    private async Task RenewAloneAsync(MessageContext context, Exception? transient, long firstSent)
    {
        var token = _keeperStop.Token;
        DropHedge(context, firstSent);
        try
        {
            if (transient is not null && context.IsRenewable && await RetryDelayAsync(context, transient, "renew", token) is not true)
            {
                RenewalLost(context, transient, firstSent);
                return;
            }

            if (await RenewAsync(context, firstSent, token))
            {
                RenewalAnswered(context);
            }
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            // The pump has stopped.
        }
    }

    /// <summary>Renews once alone, retrying transient failures while the lock lasts; false when the lease is lost or no longer kept.</summary>
    private async Task<bool> RenewAsync(MessageContext context, long firstSent, CancellationToken token)
    {
        while (true)
        {
            if (!context.IsRenewable)
            {
                return false; // settled (or the pump stopped renewing it) while a retry waited
            }

            var sentAt = TimeProvider.GetUtcNow();
            var slack = context.Message.LockedUntil - sentAt;
            var sent = TimeProvider.GetTimestamp();
            try
            {
                var lockedUntil = await context.Message.RenewLockAsync(token);
                var roundTrip = TimeProvider.GetElapsedTime(sent);
                _renewRoundTrips.Record(roundTrip, RequestLeg(lockedUntil, sentAt, roundTrip));
                _events.Renewed(context, slack, roundTrip);
                return true;
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                throw;
            }
            catch (LeaseLostException ex)
            {
                RenewalLost(context, ex, firstSent);
                return false;
            }
            catch (Exception ex)
            {
                DropHedge(context, firstSent);
                if (await RetryDelayAsync(context, ex, "renew", token) is not true)
                {
                    RenewalLost(context, ex, firstSent);
                    return false;
                }
            }
        }
    }
}
