using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.RenewalLoad;

/// <summary>
/// A broker's <see cref="IMessageSource"/> whose renew calls are counted: each message's own
/// <see cref="ILeasedMessage.RenewLockAsync"/> (one call per lease: the per-message keepers before issue 23, and the
/// interface's default batch renewal, which issues those calls concurrently). Receives and completions go to the
/// broker unchanged, in batches.
/// </summary>
internal sealed class CountingSource(IMessageSource inner, RenewCallCounter counter) : IMessageSource
{
    public TimeSpan? LockDuration => inner.LockDuration;

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
}
