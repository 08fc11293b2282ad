using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.KeeperLateness;

/// <summary>A broker's message whose single renewals are timed in a <see cref="LatenessLog"/>; everything else is the broker's own.</summary>
internal sealed class TimedMessage(ILeasedMessage inner, LatenessLog log) : ILeasedMessage
{
    /// <summary>Gets the broker's own message.</summary>
    public ILeasedMessage Inner { get; } = inner;

    public string MessageId => Inner.MessageId;

    public ReadOnlyMemory<byte> Body => Inner.Body;

    public IReadOnlyDictionary<string, string> Headers => Inner.Headers;

    public int DeliveryCount => Inner.DeliveryCount;

    public DateTimeOffset LockedUntil => Inner.LockedUntil;

    public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        var expiry = Inner.LockedUntil;
        log.CallSent();
        var lockedUntil = await Inner.RenewLockAsync(cancellationToken);
        log.Renewed(this, expiry);
        return lockedUntil;
    }

    public Task CompleteAsync(CancellationToken cancellationToken = default) => Inner.CompleteAsync(cancellationToken);

    public Task AbandonAsync(CancellationToken cancellationToken = default) => Inner.AbandonAsync(cancellationToken);

    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => Inner.DeadLetterAsync(reason, cancellationToken);
}
