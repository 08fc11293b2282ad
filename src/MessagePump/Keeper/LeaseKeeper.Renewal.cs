namespace PriorityAsync.MessagePump;

public sealed partial class LeaseKeeper
{
    /// <summary>
    /// Renews the leases that fell due together in one <see cref="IMessageSource.RenewBatchAsync"/> and applies each
    /// outcome as a single renewal's: renewed (scheduled again), lost (<see cref="LeaseLostByKeeper"/>), or — for a transient
    /// failure, a failed call, an answer that breaks the contract or a batch the source refused with an
    /// <see cref="ArgumentException"/> (both reported) — renewed again alone under the single
    /// renewal's retry rule. <paramref name="firstSent"/> is when the keeper sent them (a timestamp): it tells a stale
    /// answer from the newest (see <see cref="RenewalLost"/>).
    /// </summary>
    private async Task RenewDueAsync(LeaseHandle[] due, IMessageSource? source, long firstSent)
    {
        var token = _keeperStop.Token;
        try
        {
            while (due.Length > 0)
            {
                var messages = new ILeasedMessage[due.Length];
                var slack = new TimeSpan[due.Length];
                var now = TimeProvider.GetUtcNow();
                var sinceFirstSent = TimeProvider.GetElapsedTime(firstSent);
                for (var i = 0; i < due.Length; i++)
                {
                    // Against the expiry the broker most likely held when the keeper sent it (a renewal sent while an
                    // earlier one's answer is out goes past the known expiry, not late).
                    messages[i] = due[i].Message;
                    slack[i] = TimeSpan.FromTicks(ReadSlackAtSend(due[i])) - sinceFirstSent;
                }

                var sent = TimeProvider.GetTimestamp();
                IReadOnlyList<LeaseRenewal>? outcomes = null;
                Exception? failure = null;
                try
                {
                    CountRenewCalls(source?.RenewsBatchesNatively == true ? 1 : messages.Length);
                    outcomes = source is null
                        ? await MessageSourceDefaults.RenewEachAsync(messages, token)
                        : await source.RenewBatchAsync(messages, token);
                }
                catch (Exception ex) when (!token.IsCancellationRequested)
                {
                    failure = ex;
                }

                token.ThrowIfCancellationRequested(); // the keeper has stopped: nothing is in flight any more
                if (failure is null)
                {
                    ApplyRenewals(due, source, outcomes, slack, now, TimeProvider.GetElapsedTime(sent), firstSent);
                    return;
                }

                if (failure is ArgumentException && source is not null)
                {
                    RenewEachAloneAfterRefusedBatch(due, source, failure, firstSent);
                    return;
                }

                due = await RetryBatchAfterDelayAsync(due, failure, firstSent, token);
            }
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            // The keeper has stopped.
        }
    }

    private long ReadSlackAtSend(LeaseHandle lease)
    {
        lock (_gate)
        {
            return lease.SlackAtSendTicks;
        }
    }

    /// <summary>
    /// The source refused the batch as a whole with an <see cref="ArgumentException"/>: it holds a message the source
    /// did not receive (kept with the wrong <c>source</c>). Retrying the same batch fails the same way until every lock
    /// of it has run out, losing the leases renewed beside the wrong one; so the misuse is reported (event 34) and each
    /// lease of the batch is renewed alone through its own message (<see cref="ILeasedMessage.RenewLockAsync"/>).
    /// </summary>
    private void RenewEachAloneAfterRefusedBatch(LeaseHandle[] due, IMessageSource source, Exception failure, long firstSent)
    {
        ReportBrokenRenewal($"{BatchCallName(source)} refused a batch of {due.Length} lease(s) ({due[0].Message.MessageId}{(due.Length > 1 ? $" and {due.Length - 1} more" : string.Empty)}) with {failure.GetType().Name}: a message kept with a source it was not received from? Each lease is renewed alone through its own message.", failure);
        foreach (var lease in due)
        {
            _ = RenewAloneAsync(lease, null, firstSent);
        }
    }

    /// <summary>
    /// After a failed batch call: the leases with time left for a retry (half their remaining lock, as for a single
    /// renewal, at least <see cref="MinRetryDelay"/>) are renewed again together after the retry delay (one retry,
    /// counted and logged once); the others are lost.
    /// </summary>
    private async Task<LeaseHandle[]> RetryBatchAfterDelayAsync(LeaseHandle[] due, Exception failure, long firstSent, CancellationToken token)
    {
        var now = TimeProvider.GetUtcNow();
        var delay = _options.TransientRetryDelay;
        var kept = new List<LeaseHandle>(due.Length);
        foreach (var lease in due)
        {
            DropHedge(lease, firstSent);
            if (!lease.IsRenewable)
            {
                continue;
            }

            var half = TimeSpan.FromTicks((lease.Message.LockedUntil - now).Ticks / 2);
            if (half < RenewRetryFloor)
            {
                RenewalGaveUp(lease, failure, firstSent);
                continue;
            }

            delay = half < delay ? half : delay;
            kept.Add(lease);
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
    private void ApplyRenewals(LeaseHandle[] due, IMessageSource? source, IReadOnlyList<LeaseRenewal>? outcomes, TimeSpan[] slack, DateTimeOffset sentAt, TimeSpan roundTrip, long firstSent)
    {
        if (outcomes is null || outcomes.Count != due.Length)
        {
            ReportBrokenRenewal($"{BatchCallName(source)} answered {outcomes?.Count.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "null"} outcomes for {due.Length} messages; it must answer one per message, in order. Each lease is renewed alone.");
            foreach (var lease in due)
            {
                _ = RenewAloneAsync(lease, null, firstSent);
            }

            return;
        }

        var requestLeg = TimeSpan.Zero;
        var renewedAny = false;
        foreach (var outcome in outcomes)
        {
            if (outcome.Failure is null)
            {
                renewedAny = true;
                requestLeg = RequestLeg(source, outcome.LockedUntil, sentAt, roundTrip) is var leg && leg > requestLeg ? leg : requestLeg;
            }
        }

        // A round trip is learnt from renewals the broker took, as a single renewal's is: a batch refused whole after
        // the client held it (the Service Bus SDK waits 10 s after ServiceBusy) would otherwise teach the rule that
        // renewals take that long, and an unanswered renewal would be trusted for as long.
        if (renewedAny)
        {
            _renewRoundTrips.Record(roundTrip, requestLeg);
        }
        for (var i = 0; i < due.Length; i++)
        {
            ApplyRenewal(due[i], source, outcomes[i], i, slack[i], roundTrip, firstSent);
        }
    }

    /// <summary>
    /// Applies one message's outcome of a batch renewal as a single renewal's. While another renewal of the lease is
    /// under way, or was sent after this one, the answer's expiry may differ from the message's (answers of hedged
    /// renewals cross): only an answer without such a sibling must match. An answer earlier than the message's expiry
    /// is older news, not an answer about another message: a renewal the keeper does not see (the user's own, such as a
    /// processor handler's <c>RenewMessageLockAsync</c>) moved the lock further meanwhile; reporting it broke no
    /// contract and renewing again alone was a wasted call. An answer later than the message's expiry is
    /// one the message did not take: that still breaks the contract.
    /// </summary>
    private void ApplyRenewal(LeaseHandle lease, IMessageSource? source, LeaseRenewal outcome, int index, TimeSpan slack, TimeSpan roundTrip, long firstSent)
    {
        switch (outcome.Failure)
        {
            case null when outcome.LockedUntil > lease.Message.LockedUntil && !HasSiblingRenewal(lease, firstSent):
                ReportBrokenRenewal($"{BatchCallName(source)} answered 'renewed until {outcome.LockedUntil:O}' at index {index}, but that message ({lease.Message.MessageId}) reports LockedUntil {lease.Message.LockedUntil:O}: the answer is not about it. It is renewed alone.");
                _ = RenewAloneAsync(lease, null, firstSent);
                break;
            case null:
                Renewed(lease, slack, roundTrip);
                RenewalAnswered(lease);
                break;
            case LeaseLostException lost:
                RenewalLost(lease, lost, firstSent);
                break;
            case TransientTransportException transient:
                _ = RenewAloneAsync(lease, transient, firstSent);
                break;
            default:
                ReportBrokenRenewal($"{BatchCallName(source)} answered {outcome.Failure.GetType().Name} at index {index} ({lease.Message.MessageId}); a failure must be a LeaseLostException or a TransientTransportException. It is renewed alone.", outcome.Failure);
                _ = RenewAloneAsync(lease, null, firstSent);
                break;
        }
    }

    /// <summary>The batch call's name in reports: the source's RenewBatchAsync, or the default one-by-one renewal.</summary>
    private static string BatchCallName(IMessageSource? source) =>
        source is null ? $"{nameof(LeaseKeeper)}'s one-by-one {nameof(ILeasedMessage.RenewLockAsync)}" : $"{source.GetType().Name}.{nameof(IMessageSource.RenewBatchAsync)}";

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
    private async Task RenewAloneAsync(LeaseHandle lease, Exception? transient, long firstSent)
    {
        var token = _keeperStop.Token;
        DropHedge(lease, firstSent);
        try
        {
            if (transient is not null && lease.IsRenewable && await RenewRetryDelayAsync(lease.Message, transient, 0, token) is not true)
            {
                RenewalGaveUp(lease, transient, firstSent);
                return;
            }

            if (await RenewAsync(lease, firstSent, transient is null ? 0 : 1, token))
            {
                RenewalAnswered(lease);
            }
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            // The keeper has stopped.
        }
    }

    /// <summary>
    /// Renews once alone, retrying transient failures with backoff while the lock lasts (<paramref name="attempt"/>:
    /// how many retries came before); false when the lease is lost, no longer kept, or out of time for a retry.
    /// </summary>
    private async Task<bool> RenewAsync(LeaseHandle lease, long firstSent, int attempt, CancellationToken token)
    {
        while (true)
        {
            if (!lease.IsRenewable)
            {
                return false; // released (or lost) while a retry waited
            }

            var sentAt = TimeProvider.GetUtcNow();
            var slack = lease.Message.LockedUntil - sentAt;
            var sent = TimeProvider.GetTimestamp();
            try
            {
                CountRenewCalls(1);
                var lockedUntil = await lease.Message.RenewLockAsync(token);
                var roundTrip = TimeProvider.GetElapsedTime(sent);
                _renewRoundTrips.Record(roundTrip, RequestLeg(lease.Source, lockedUntil, sentAt, roundTrip));
                Renewed(lease, slack, roundTrip);
                return true;
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                throw;
            }
            catch (LeaseLostException ex)
            {
                RenewalLost(lease, ex, firstSent);
                return false;
            }
            catch (Exception ex)
            {
                DropHedge(lease, firstSent);
                if (await RenewRetryDelayAsync(lease.Message, ex, attempt++, token) is not true)
                {
                    RenewalGaveUp(lease, ex, firstSent);
                    return false;
                }
            }
        }
    }

    /// <summary>
    /// Waits before retrying a renew call of <paramref name="message"/> that failed transiently (reported): the
    /// <see cref="LeaseKeeperOptions.TransientRetryDelay"/> doubled for each earlier retry (<paramref name="attempt"/>),
    /// cut to half the lock left; false, without waiting, when that is under <see cref="RenewRetryFloor"/> or under two
    /// of the worst request legs observed (a retry could not reach the broker in time). A throttled broker therefore
    /// sees a handful of retries per lease, never a tight loop as the lock runs down; the lease is then lost when its
    /// known expiry passes (<see cref="ExpiredUnrenewed"/>), not before.
    /// </summary>
    private async Task<bool> RenewRetryDelayAsync(ILeasedMessage message, Exception failure, int attempt, CancellationToken token)
    {
        var remaining = message.LockedUntil - TimeProvider.GetUtcNow();
        var backoff = _options.TransientRetryDelay.Ticks << Math.Min(attempt, 16);
        var delay = TimeSpan.FromTicks(Math.Min(backoff, remaining.Ticks / 2));
        if (delay < RenewRetryFloor || delay.Ticks < 2 * _renewRoundTrips.WorstRequestLeg.Ticks)
        {
            return false;
        }

        _events.TransientFailure(failure, "renew", message.MessageId, delay);
        await Task.Delay(delay, TimeProvider, token);
        return true;
    }

    /// <summary>The least pause before a renewal's retry: a sixteenth of <see cref="LeaseKeeperOptions.TransientRetryDelay"/>, at least <see cref="MinRetryDelay"/>.</summary>
    private TimeSpan RenewRetryFloor => TimeSpan.FromTicks(Math.Max(MinRetryDelay.Ticks, _options.TransientRetryDelay.Ticks / 16));

    /// <summary>
    /// Waits before retrying a settle call of <paramref name="message"/> that failed transiently (reported); false,
    /// without waiting, when the lock has no time left for one. A pump's settlements retry through it.
    /// </summary>
    internal async Task<bool> RetryDelayAsync(ILeasedMessage message, Exception failure, string operation, CancellationToken token)
    {
        var remaining = message.LockedUntil - TimeProvider.GetUtcNow();
        var delay = TimeSpan.FromTicks(Math.Min(_options.TransientRetryDelay.Ticks, remaining.Ticks / 2));
        if (delay < MinRetryDelay)
        {
            return false;
        }

        _events.TransientFailure(failure, operation, message.MessageId, delay);
        await Task.Delay(delay, TimeProvider, token);
        return true;
    }
}
