namespace PriorityAsync.Messaging;

/// <summary>
/// A queue that hands out messages under a lease (a lock): the consumer must complete, abandon or dead-letter each
/// message before the lease runs out, or renew it.
/// </summary>
/// <remarks>
/// A broker adapter is one class of glue: <see cref="ReceiveAsync"/> maps to a single-message receive, and each
/// <see cref="ILeasedMessage"/> maps its settlement calls onto the broker's. See <c>docs/message-pump.md</c> for the
/// Azure Service Bus mapping.
/// </remarks>
public interface IMessageSource
{
    /// <summary>Gets the lock duration of the queue when the source knows it, or <see langword="null"/>.</summary>
    /// <remarks>The pump checks its renewal buffer against it at construction.</remarks>
    TimeSpan? LockDuration { get; }

    /// <summary>Receives one message and locks it for the caller.</summary>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>The locked message, or <see langword="null"/> when the queue has no visible message.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default);
}
