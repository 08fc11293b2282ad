using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.RenewalLoad;

/// <summary>
/// A broker's <see cref="IMessageSource"/> whose renew calls are counted where they reach the broker. With
/// <c>native: false</c> it has single renewals only: the pump's batch renewal is the interface's default, one
/// <see cref="ILeasedMessage.RenewLockAsync"/> per lease (exactly what a keeper per message sends, each at its own due
/// time). With <c>native: true</c> it forwards <see cref="RenewBatchAsync"/> to the broker's
/// own batch renewal: one call per batch. Receives and completions go to the broker unchanged, in batches.
/// </summary>
internal sealed class CountingSource(IMessageSource inner, RenewCallCounter counter, bool native) : IMessageSource
{
    public TimeSpan? LockDuration => inner.LockDuration;

    public bool RenewsBatchesNatively => native;

    public bool CompletesBatchesNatively => inner.CompletesBatchesNatively;

    public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        throw new NotSupportedException("The pump receives in batches.");

    public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        var messages = await inner.ReceiveBatchAsync(maxMessages, cancellationToken);
        var counted = new ILeasedMessage[messages.Count];
        for (var i = 0; i < counted.Length; i++)
        {
            counted[i] = new CountingMessage(messages[i], counter);
        }

        return counted;
    }

    public Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default) =>
        inner.CompleteBatchAsync(Unwrap(messages), cancellationToken);

    public Task<IReadOnlyList<LeaseRenewal>> RenewBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        if (!native)
        {
            return MessageSourceDefaultsOf(messages, cancellationToken);
        }

        counter.Count(messages.Count);
        return inner.RenewBatchAsync(Unwrap(messages), cancellationToken);
    }

    /// <summary>The interface's default batch renewal: every message's own renewal (counted by <see cref="CountingMessage"/>).</summary>
    private Task<IReadOnlyList<LeaseRenewal>> MessageSourceDefaultsOf(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken) =>
        ((IMessageSource)new DefaultRenewals()).RenewBatchAsync(messages, cancellationToken);

    /// <summary>The broker's own messages of a batch.</summary>
    public static ILeasedMessage[] Unwrap(IReadOnlyList<ILeasedMessage> messages)
    {
        var own = new ILeasedMessage[messages.Count];
        for (var i = 0; i < own.Length; i++)
        {
            own[i] = ((CountingMessage)messages[i]).Inner;
        }

        return own;
    }

    /// <summary>A source with single calls only, whose <see cref="IMessageSource.RenewBatchAsync"/> is the interface's default.</summary>
    private sealed class DefaultRenewals : IMessageSource
    {
        public TimeSpan? LockDuration => null;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            throw new NotSupportedException("Only its default batch renewal is used.");
    }
}
