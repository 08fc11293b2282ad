namespace PriorityAsync.Messaging.Tests.Pump;

/// <summary>
/// A source over an <see cref="InMemoryQueue"/> whose complete or abandon calls never answer (a broker that went
/// silent mid-call). Receives and renewals pass through. A silent call ends only on its token, and only when
/// <paramref name="honourToken"/> is set; otherwise it never ends at all.
/// </summary>
internal sealed class SilentSettlements(InMemoryQueue inner, bool silentComplete, bool silentAbandon, bool honourToken) : IMessageSource
{
    private int _silentCalls;

    /// <summary>Gets how many settle calls went unanswered.</summary>
    public int SilentCalls => Volatile.Read(ref _silentCalls);

    public TimeSpan? LockDuration => inner.LockDuration;

    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        await inner.ReceiveAsync(cancellationToken) is { } message ? new Message(message, this) : null;

    private Task Complete(ILeasedMessage message, CancellationToken cancellationToken) =>
        silentComplete ? Silence(cancellationToken) : message.CompleteAsync(cancellationToken);

    private Task Abandon(ILeasedMessage message, CancellationToken cancellationToken) =>
        silentAbandon ? Silence(cancellationToken) : message.AbandonAsync(cancellationToken);

    private Task Silence(CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _silentCalls);
        return honourToken ? Task.Delay(Timeout.InfiniteTimeSpan, cancellationToken) : new TaskCompletionSource().Task;
    }

    private sealed class Message(ILeasedMessage inner, SilentSettlements source) : ILeasedMessage
    {
        public string MessageId => inner.MessageId;

        public ReadOnlyMemory<byte> Body => inner.Body;

        public int DeliveryCount => inner.DeliveryCount;

        public DateTimeOffset LockedUntil => inner.LockedUntil;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => inner.RenewLockAsync(cancellationToken);

        public Task CompleteAsync(CancellationToken cancellationToken = default) => source.Complete(inner, cancellationToken);

        public Task AbandonAsync(CancellationToken cancellationToken = default) => source.Abandon(inner, cancellationToken);

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => inner.DeadLetterAsync(reason, cancellationToken);
    }
}
