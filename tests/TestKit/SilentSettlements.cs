using PriorityAsync.MessagePump;

namespace PriorityAsync.TestKit;

/// <summary>
/// A source over an <see cref="InMemoryQueue"/> whose settle calls may never answer (a broker that went silent
/// mid-call): <paramref name="silence"/> decides per call, given <c>complete</c>, <c>abandon</c> or <c>dead-letter</c>.
/// Receives and renewals pass through. A silent call ends only on its token, and only when
/// <paramref name="honourToken"/> is set; otherwise it never ends at all. With <paramref name="nativeBatches"/> the
/// source completes batches in one call, silent when <c>complete</c> is.
/// </summary>
/// <param name="inner">The queue the calls pass to.</param>
/// <param name="silence">Whether a settle call (<c>complete</c>, <c>abandon</c>, <c>dead-letter</c>) goes unanswered.</param>
/// <param name="honourToken">Whether an unanswered call ends when its token is canceled.</param>
/// <param name="nativeBatches">Whether the source completes batches in one call.</param>
/// <remarks>
/// </remarks>
public sealed class SilentSettlements(InMemoryQueue inner, Func<string, bool> silence, bool honourToken, bool nativeBatches = false) : IMessageSource
{
    private int _silentCalls;
    private int _canceledCalls;

    /// <summary>Gets how many settle calls went unanswered.</summary>
    public int SilentCalls => Volatile.Read(ref _silentCalls);

    /// <summary>Gets how many unanswered settle calls had their token canceled.</summary>
    public int CanceledCalls => Volatile.Read(ref _canceledCalls);

    /// <inheritdoc />
    public TimeSpan? LockDuration => inner.LockDuration;

    /// <inheritdoc />
    public bool CompletesBatchesNatively => nativeBatches;

    /// <inheritdoc />
    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        await inner.ReceiveAsync(cancellationToken) is { } message ? new Message(message, this) : null;

    /// <inheritdoc />
    public async Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        IReadOnlyList<Exception?> outcomes = [];
        await Settle("complete", async () => outcomes = await inner.CompleteBatchAsync([.. messages.Select(m => ((Message)m).Inner)], cancellationToken), cancellationToken);
        return outcomes;
    }

    private Task Settle(string operation, Func<Task> call, CancellationToken cancellationToken)
    {
        if (!silence(operation))
        {
            return call();
        }

        Interlocked.Increment(ref _silentCalls);
        cancellationToken.UnsafeRegister(_ => Interlocked.Increment(ref _canceledCalls), null);
        return honourToken ? Task.Delay(Timeout.InfiniteTimeSpan, cancellationToken) : new TaskCompletionSource().Task;
    }

    private sealed class Message(ILeasedMessage inner, SilentSettlements source) : ILeasedMessage
    {
        public ILeasedMessage Inner => inner;

        public string MessageId => inner.MessageId;

        public ReadOnlyMemory<byte> Body => inner.Body;

        public int DeliveryCount => inner.DeliveryCount;

        public DateTimeOffset LockedUntil => inner.LockedUntil;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => inner.RenewLockAsync(cancellationToken);

        public Task CompleteAsync(CancellationToken cancellationToken = default) =>
            source.Settle("complete", () => inner.CompleteAsync(cancellationToken), cancellationToken);

        public Task AbandonAsync(CancellationToken cancellationToken = default) =>
            source.Settle("abandon", () => inner.AbandonAsync(cancellationToken), cancellationToken);

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) =>
            source.Settle("dead-letter", () => inner.DeadLetterAsync(reason, cancellationToken), cancellationToken);
    }
}
