using System.Collections.ObjectModel;

namespace PriorityAsync.MessagePump;

/// <summary>A message received under a lease, with the operations that renew and settle it.</summary>
/// <remarks>
/// Settling (<see cref="CompleteAsync"/>, <see cref="AbandonAsync"/>, <see cref="DeadLetterAsync(string, CancellationToken)"/>) ends the lease.
/// Every operation on a lease that has expired, or that was already settled, throws <see cref="LeaseLostException"/>.
/// </remarks>
public interface ILeasedMessage
{
    /// <summary>Gets the message's identifier, the same on every delivery.</summary>
    string MessageId { get; }

    /// <summary>Gets the message's body.</summary>
    ReadOnlyMemory<byte> Body { get; }

    /// <summary>
    /// Gets the message's headers (a broker's application properties): string names and values, names compared
    /// ordinally, empty when the message has none (the default implementation, for adapters that carry none).
    /// </summary>
    /// <remarks>
    /// A <see cref="PriorityMessagePump"/> reads the W3C trace context (<c>traceparent</c>, <c>tracestate</c>) here to link its
    /// process span to the producer's; see <see cref="MessagePumpDiagnostics"/>. Strings rather than objects: trace
    /// propagators read and write strings, and every broker can carry them.
    /// </remarks>
    IReadOnlyDictionary<string, string> Headers => ReadOnlyDictionary<string, string>.Empty;

    /// <summary>Gets how many times the message has been delivered, this delivery included (1 on the first).</summary>
    int DeliveryCount { get; }

    /// <summary>Gets when the lease expires unless renewed; updated by <see cref="RenewLockAsync"/>.</summary>
    DateTimeOffset LockedUntil { get; }

    /// <summary>Extends the lease by the queue's lock duration from now.</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The new <see cref="LockedUntil"/>.</returns>
    /// <exception cref="LeaseLostException">The lease expired or the message was settled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default);

    /// <summary>Removes the message from the queue: it was processed.</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the broker has removed the message.</returns>
    /// <exception cref="LeaseLostException">The lease expired or the message was settled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    Task CompleteAsync(CancellationToken cancellationToken = default);

    /// <summary>Releases the lease: the message becomes visible again for another delivery.</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the broker has released the message.</returns>
    /// <exception cref="LeaseLostException">The lease expired or the message was settled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    Task AbandonAsync(CancellationToken cancellationToken = default);

    /// <summary>Moves the message to the dead-letter queue: it will not be delivered again.</summary>
    /// <param name="reason">Why the message cannot be processed.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the broker has dead-lettered the message.</returns>
    /// <exception cref="LeaseLostException">The lease expired or the message was settled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default);

    /// <summary>Moves the message to the dead-letter queue with a reason and a description: it will not be delivered again.</summary>
    /// <param name="reason">Why the message cannot be processed.</param>
    /// <param name="description">More detail, where the broker carries it; <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the broker has dead-lettered the message.</returns>
    /// <remarks>
    /// The default implementation, for brokers that carry no description, dead-letters with <paramref name="reason"/>
    /// alone (<see cref="DeadLetterAsync(string, CancellationToken)"/>) and drops <paramref name="description"/>.
    /// </remarks>
    /// <exception cref="LeaseLostException">The lease expired or the message was settled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    Task DeadLetterAsync(string reason, string? description, CancellationToken cancellationToken = default) =>
        DeadLetterAsync(reason, cancellationToken);
}
