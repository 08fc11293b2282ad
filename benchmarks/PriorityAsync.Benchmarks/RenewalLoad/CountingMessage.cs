using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.RenewalLoad;

/// <summary>A broker's message whose single renew calls are counted; everything else is the broker's own.</summary>
internal sealed class CountingMessage(ILeasedMessage inner, RenewCallCounter counter) : ILeasedMessage
{
    /// <summary>Gets the broker's own message.</summary>
    public ILeasedMessage Inner { get; } = inner;

    public string MessageId => Inner.MessageId;

    public ReadOnlyMemory<byte> Body => Inner.Body;

    public IReadOnlyDictionary<string, string> Headers => Inner.Headers;

    public int DeliveryCount => Inner.DeliveryCount;

    public DateTimeOffset LockedUntil => Inner.LockedUntil;

    public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        counter.Count(1);
        return Inner.RenewLockAsync(cancellationToken);
    }

    public Task CompleteAsync(CancellationToken cancellationToken = default) => Inner.CompleteAsync(cancellationToken);

    public Task AbandonAsync(CancellationToken cancellationToken = default) => Inner.AbandonAsync(cancellationToken);

    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => Inner.DeadLetterAsync(reason, cancellationToken);
}
