namespace PriorityAsync.MessagePump;

/// <summary>
/// A queue that hands out messages under a lease (a lock): the consumer must complete, abandon or dead-letter each
/// message before the lease runs out, or renew it.
/// </summary>
/// <remarks>
/// <para>
/// A broker adapter is one class of glue: <see cref="ReceiveAsync"/> maps to a single-message receive, and each
/// <see cref="ILeasedMessage"/> maps its settlement calls onto the broker's. See <c>docs/message-pump.md</c> for the
/// Azure Service Bus mapping.
/// </para>
/// <para>
/// A broker that can receive or complete many messages in one round trip overrides <see cref="ReceiveBatchAsync"/>
/// , <see cref="CompleteBatchAsync"/> and <see cref="RenewBatchAsync"/>; their default implementations use the
/// single-message calls, so an adapter that has only those works unchanged.
/// </para>
/// </remarks>
public interface IMessageSource
{
    /// <summary>Gets the lock duration of the queue when the source knows it, or <see langword="null"/>.</summary>
    /// <remarks>The pump checks its renewal buffer against it at construction.</remarks>
    TimeSpan? LockDuration { get; }

    /// <summary>
    /// Gets whether <see cref="CompleteBatchAsync"/> completes a batch in one broker call. <see langword="false"/> (the
    /// default) for a source with single calls only: its batch would answer only when the slowest of its calls has, so
    /// a <see cref="PriorityMessagePump"/> completes each message with its own call instead.
    /// </summary>
    bool CompletesBatchesNatively => false;

    /// <summary>
    /// Gets whether <see cref="RenewBatchAsync"/> renews a batch in one broker call. <see langword="false"/> (the
    /// default) for a source with single renewals only: a <see cref="PriorityMessagePump"/> then still renews the leases
    /// that fall due together in one <see cref="RenewBatchAsync"/>, which issues their single renewals concurrently.
    /// </summary>
    bool RenewsBatchesNatively => false;

    /// <summary>
    /// Gets the messaging system the source reads from, as OpenTelemetry's <c>messaging.system</c> attribute names it
    /// (for example <c>servicebus</c>, <c>rabbitmq</c>, <c>postgresql</c>). Defaults to
    /// <see cref="MessagePumpDiagnostics.UnknownSystem"/>.
    /// </summary>
    /// <remarks>Read once, when a <see cref="PriorityMessagePump"/> is created, to tag its metrics and spans.</remarks>
    string MessagingSystem => MessagePumpDiagnostics.UnknownSystem;

    /// <summary>
    /// Gets the name of the queue the source reads from (OpenTelemetry's <c>messaging.destination.name</c>), or
    /// <see langword="null"/> (the default) when the source does not name it.
    /// </summary>
    /// <remarks>Read once, when a <see cref="PriorityMessagePump"/> is created, to tag its metrics and spans.</remarks>
    string? DestinationName => null;

    /// <summary>Receives one message and locks it for the caller.</summary>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>The locked message, or <see langword="null"/> when the queue has no visible message.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default);

    /// <summary>Receives up to <paramref name="maxMessages"/> messages in one call and locks them for the caller.</summary>
    /// <param name="maxMessages">The most messages to return; at least 1.</param>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>
    /// The locked messages, oldest first: at most <paramref name="maxMessages"/>, none when the queue has no visible
    /// message. The default implementation makes one <see cref="ReceiveAsync"/> call and returns its message, if any.
    /// </returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxMessages"/> is zero or negative.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
        return MessageSourceDefaults.ReceiveOneAsync(this, cancellationToken);
    }

    /// <summary>Completes (removes) every message of <paramref name="messages"/>, in one call where the broker can.</summary>
    /// <param name="messages">Messages received from this source, each still locked by the caller; at least one.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>
    /// One entry per message, in the same order: <see langword="null"/> when the message was completed, otherwise the
    /// exception of its own failure — <see cref="LeaseLostException"/> when its lease had expired or it was already
    /// settled, <see cref="TransientTransportException"/> when completing it alone is worth retrying,
    /// <see cref="OperationCanceledException"/> when <paramref name="cancellationToken"/> stopped its call. The default
    /// implementation issues every message's <see cref="ILeasedMessage.CompleteAsync"/> at once and collects the
    /// outcomes.
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="messages"/> or one of its items is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="messages"/> is empty.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">
    /// The whole call failed in a way worth retrying: no message of the batch was completed by it.
    /// </exception>
    Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        MessageBatch.ThrowIfInvalid(messages);
        return MessageSourceDefaults.CompleteEachAsync(messages, cancellationToken);
    }

    /// <summary>
    /// Renews the lease of every message of <paramref name="messages"/> by the queue's lock duration from now, in one call
    /// where the broker can. Each message's <see cref="ILeasedMessage.LockedUntil"/> is updated as by
    /// <see cref="ILeasedMessage.RenewLockAsync"/>.
    /// </summary>
    /// <param name="messages">Messages received from this source, each still locked by the caller; at least one.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>
    /// One <see cref="LeaseRenewal"/> per message, in the same order: renewed with its new expiry, or the failure of
    /// that message alone (<see cref="LeaseRenewal.Failure"/>). The default implementation issues every message's
    /// <see cref="ILeasedMessage.RenewLockAsync"/> at once and collects the outcomes: one broker call per message, sent
    /// concurrently.
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="messages"/> or one of its items is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="messages"/> is empty.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">
    /// The whole call failed in a way worth retrying: no lease of the batch was renewed by it.
    /// </exception>
    Task<IReadOnlyList<LeaseRenewal>> RenewBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        MessageBatch.ThrowIfInvalid(messages, "renew");
        return MessageSourceDefaults.RenewEachAsync(messages, cancellationToken);
    }
}
