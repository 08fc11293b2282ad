using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.KeeperLateness;

/// <summary>
/// A broker's <see cref="IMessageSource"/> that times what the pump's keeper does (<see cref="LatenessLog"/>): when each
/// receive returned and when each renewal was answered. Receives, completions and renewals go to the broker unchanged,
/// in the same batches, so the pump sees the broker it would see without this source: single renewals, and (in a tree
/// whose pump renews in batches) the broker's native batch renewal, one call per batch.
/// </summary>
/// <remarks>
/// The same file builds against commit <c>3a8b389</c> (a keeper per message), whose <see cref="IMessageSource"/> has no
/// batch renewal: there the project defines <c>BEFORE_ISSUE_23</c> and the batch renewal members are left out.
/// Its awaits resume on the pump's context (no <c>ConfigureAwait(false)</c>): on virtual time the handlers' CPU slices
/// advance the clock, and an answer completed inline inside such an advance would run the pump's lease code in the
/// middle of a handler, in both trees.
/// </remarks>
internal sealed class TimedSource(IMessageSource inner, LatenessLog log) : IMessageSource
{
    public TimeSpan? LockDuration => inner.LockDuration;

    public bool CompletesBatchesNatively => inner.CompletesBatchesNatively;

    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        var message = await inner.ReceiveAsync(cancellationToken);
        return message is null ? null : Timed(message);
    }

    public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        var messages = await inner.ReceiveBatchAsync(maxMessages, cancellationToken);
        var timed = new ILeasedMessage[messages.Count];
        for (var i = 0; i < timed.Length; i++)
        {
            timed[i] = Timed(messages[i]);
        }

        return timed;
    }

    public Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default) =>
        inner.CompleteBatchAsync(Unwrap(messages), cancellationToken);

#if !BEFORE_ISSUE_23
    public bool RenewsBatchesNatively => inner.RenewsBatchesNatively;

    public async Task<IReadOnlyList<LeaseRenewal>> RenewBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        if (!inner.RenewsBatchesNatively)
        {
            // The broker's batch renewal over its single renewals: each one timed by its TimedMessage.
            return await inner.RenewBatchAsync(messages, cancellationToken);
        }

        var expiries = new DateTimeOffset[messages.Count];
        for (var i = 0; i < expiries.Length; i++)
        {
            expiries[i] = messages[i].LockedUntil;
        }

        var sent = log.Now;
        log.CallSent();
        var outcomes = await inner.RenewBatchAsync(Unwrap(messages), cancellationToken);
        for (var i = 0; i < outcomes.Count && i < messages.Count; i++)
        {
            if (outcomes[i].IsRenewed)
            {
                log.Renewed(messages[i], expiries[i], sent);
            }
        }

        return outcomes;
    }
#endif

    private static ILeasedMessage[] Unwrap(IReadOnlyList<ILeasedMessage> messages)
    {
        var own = new ILeasedMessage[messages.Count];
        for (var i = 0; i < own.Length; i++)
        {
            own[i] = ((TimedMessage)messages[i]).Inner;
        }

        return own;
    }

    private TimedMessage Timed(ILeasedMessage message)
    {
        var timed = new TimedMessage(message, log);
        log.Received(timed);
        return timed;
    }
}
