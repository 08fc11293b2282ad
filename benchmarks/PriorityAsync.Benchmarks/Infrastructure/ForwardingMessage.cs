using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// A broker's message seen through a harness: every member is the broker's own, and a subclass observes its renewals
/// by overriding <see cref="RenewLockAsync"/>.
/// </summary>
internal abstract class ForwardingMessage(ILeasedMessage inner) : ILeasedMessage
{
    /// <summary>Gets the broker's own message.</summary>
    public ILeasedMessage Inner { get; } = inner;

    public string MessageId => Inner.MessageId;

    public ReadOnlyMemory<byte> Body => Inner.Body;

    public IReadOnlyDictionary<string, string> Headers => Inner.Headers;

    public int DeliveryCount => Inner.DeliveryCount;

    public DateTimeOffset LockedUntil => Inner.LockedUntil;

    public virtual Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => Inner.RenewLockAsync(cancellationToken);

    public Task CompleteAsync(CancellationToken cancellationToken = default) => Inner.CompleteAsync(cancellationToken);

    public Task AbandonAsync(CancellationToken cancellationToken = default) => Inner.AbandonAsync(cancellationToken);

    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => Inner.DeadLetterAsync(reason, cancellationToken);
}
