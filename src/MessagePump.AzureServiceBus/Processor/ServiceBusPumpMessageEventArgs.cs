using System.Runtime.ExceptionServices;
using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// What a <see cref="ServiceBusPumpProcessor"/> hands its <see cref="ServiceBusPumpProcessor.ProcessMessageAsync"/>
/// handler: the message and the calls that settle it, shaped like the SDK's <see cref="ProcessMessageEventArgs"/>.
/// Each settlement runs in the pump's lease lane and is answered by the broker (see <see cref="ServiceBusLeasedMessage"/>); a message is settled once.
/// </summary>
/// <remarks>
/// A deferred message (<see cref="DeferMessageAsync"/>) is counted by the pump as deferred
/// (<see cref="MessagePumpStatistics.Deferred"/>); receive it again with
/// <see cref="ServiceBusPumpProcessor.ProcessDeferredMessagesAsync"/>, which hands it to the handler like any other.
/// A <see cref="ServiceBusPumpSessionProcessor"/>'s handler gets the derived <see cref="ServiceBusPumpSessionMessageEventArgs"/>
/// (the same calls, and the session's); no other type derives from it (its constructor is internal).
/// </remarks>
public class ServiceBusPumpMessageEventArgs : EventArgs
{
    private readonly ServiceBusLeasedMessage _leased;
    private readonly string _entityPath;
    private readonly Lane _leaseLane;
    private int _settled;
    private ServiceBusException? _lockLostThrown;

    internal ServiceBusPumpMessageEventArgs(MessageContext context, ServiceBusLeasedMessage leased, Lane leaseLane, string entityPath, string fullyQualifiedNamespace, CancellationToken cancellationToken)
    {
        Context = context;
        _leased = leased;
        _leaseLane = leaseLane;
        _entityPath = entityPath;
        FullyQualifiedNamespace = fullyQualifiedNamespace;
        CancellationToken = cancellationToken;
    }

    /// <summary>Gets the SDK's message, with every property the broker sent.</summary>
    public ServiceBusReceivedMessage Message => _leased.Message;

    /// <summary>
    /// Gets a token canceled when the lock is lost, when the processor stops without waiting any longer, or when the
    /// handler has run <see cref="ServiceBusPumpProcessorOptions.MaxAutoLockRenewalDuration"/>.
    /// </summary>
    public CancellationToken CancellationToken { get; }

    /// <summary>Gets the path of the queue or subscription the message came from (with the sub-queue's suffix when the processor reads one).</summary>
    public string EntityPath => _entityPath;

    /// <summary>Gets the namespace's host name.</summary>
    public string FullyQualifiedNamespace { get; }

    /// <summary>
    /// Gets the pump's context of this message: its lanes and <see cref="MessageContext.ShouldYield"/>, so that a
    /// CPU-heavy handler can <c>await PriorityScheduler.YieldIfNeeded()</c> and let lock renewals run.
    /// </summary>
    public MessageContext Context { get; }

    /// <summary>Gets whether the handler has settled the message (or tried to).</summary>
    public bool IsSettled => Volatile.Read(ref _settled) != 0;

    /// <summary>Gets the lock-lost exception (<see cref="ServiceBusFailureReason.MessageLockLost"/> or <see cref="ServiceBusFailureReason.SessionLockLost"/>) a settlement threw to the handler, or <see langword="null"/>.</summary>
    internal ServiceBusException? LockLostThrown => Volatile.Read(ref _lockLostThrown);

    /// <summary>Completes the message: it was processed.</summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers or the client's operation timeout (<see cref="ServiceBusRetryOptions.TryTimeout"/>) ends it, not with this token.</param>
    /// <returns>A task that completes when the broker has completed the message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>; for a message of a session <see cref="ServiceBusFailureReason.SessionLockLost"/>), or the broker refused the settlement.</exception>
    public Task CompleteMessageAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken = default) =>
        SettleAsync(message, "complete", () => Context.CompleteAsync(), cancellationToken);

    /// <summary>Abandons the message: the broker makes it visible again for another delivery, with its delivery count raised.</summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="propertiesToModify">Application properties to set on the message (added, or replacing those of the same name); <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers or the client's operation timeout (<see cref="ServiceBusRetryOptions.TryTimeout"/>) ends it, not with this token.</param>
    /// <returns>A task that completes when the broker has released the message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>; for a message of a session <see cref="ServiceBusFailureReason.SessionLockLost"/>), or the broker refused the settlement.</exception>
    public Task AbandonMessageAsync(ServiceBusReceivedMessage message, IDictionary<string, object>? propertiesToModify = null, CancellationToken cancellationToken = default) =>
        SettleAsync(message, MessageSettlement.Abandon(propertiesToModify), cancellationToken);

    /// <summary>Moves the message to the dead-letter queue with a reason and a description.</summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="deadLetterReason">Why the message cannot be processed (the <c>DeadLetterReason</c> property); required.</param>
    /// <param name="deadLetterErrorDescription">More detail (the <c>DeadLetterErrorDescription</c> property); <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers or the client's operation timeout (<see cref="ServiceBusRetryOptions.TryTimeout"/>) ends it, not with this token.</param>
    /// <returns>A task that completes when the broker has dead-lettered the message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message, or <paramref name="deadLetterReason"/> is empty.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>; for a message of a session <see cref="ServiceBusFailureReason.SessionLockLost"/>), or the broker refused the settlement.</exception>
    public Task DeadLetterMessageAsync(ServiceBusReceivedMessage message, string deadLetterReason, string? deadLetterErrorDescription = null, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(deadLetterReason);
        return SettleAsync(message, MessageSettlement.DeadLetter(deadLetterReason, deadLetterErrorDescription), cancellationToken);
    }

    /// <summary>Moves the message to the dead-letter queue without a reason, setting application properties on it.</summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="propertiesToModify">Application properties to set on the message (added, or replacing those of the same name); <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers or the client's operation timeout (<see cref="ServiceBusRetryOptions.TryTimeout"/>) ends it, not with this token.</param>
    /// <returns>A task that completes when the broker has dead-lettered the message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>; for a message of a session <see cref="ServiceBusFailureReason.SessionLockLost"/>), or the broker refused the settlement.</exception>
    public Task DeadLetterMessageAsync(ServiceBusReceivedMessage message, IDictionary<string, object>? propertiesToModify = null, CancellationToken cancellationToken = default) =>
        SettleAsync(message, MessageSettlement.DeadLetter(reason: null, transportData: propertiesToModify), cancellationToken);

    /// <summary>Moves the message to the dead-letter queue with a reason and a description, setting application properties on it.</summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="propertiesToModify">Application properties to set on the message (added, or replacing those of the same name); <see langword="null"/> for none.</param>
    /// <param name="deadLetterReason">Why the message cannot be processed (the <c>DeadLetterReason</c> property); required.</param>
    /// <param name="deadLetterErrorDescription">More detail (the <c>DeadLetterErrorDescription</c> property); <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers or the client's operation timeout (<see cref="ServiceBusRetryOptions.TryTimeout"/>) ends it, not with this token.</param>
    /// <returns>A task that completes when the broker has dead-lettered the message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message, or <paramref name="deadLetterReason"/> is empty.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>; for a message of a session <see cref="ServiceBusFailureReason.SessionLockLost"/>), or the broker refused the settlement.</exception>
    public Task DeadLetterMessageAsync(ServiceBusReceivedMessage message, IDictionary<string, object>? propertiesToModify, string deadLetterReason, string? deadLetterErrorDescription = null, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(deadLetterReason);
        return SettleAsync(message, MessageSettlement.DeadLetter(deadLetterReason, deadLetterErrorDescription, propertiesToModify), cancellationToken);
    }

    /// <summary>
    /// Defers the message: the broker keeps it aside, to be received again only by its sequence number
    /// (<see cref="ServiceBusReceivedMessage.SequenceNumber"/>; see <see cref="ServiceBusPumpProcessor.ProcessDeferredMessagesAsync"/>).
    /// The pump counts it as deferred (<see cref="MessagePumpStatistics.Deferred"/>).
    /// </summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="propertiesToModify">Application properties to set on the message (added, or replacing those of the same name); <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers or the client's operation timeout (<see cref="ServiceBusRetryOptions.TryTimeout"/>) ends it, not with this token.</param>
    /// <returns>A task that completes when the broker has deferred the message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>; for a message of a session <see cref="ServiceBusFailureReason.SessionLockLost"/>), or the broker refused the settlement.</exception>
    public Task DeferMessageAsync(ServiceBusReceivedMessage message, IDictionary<string, object>? propertiesToModify = null, CancellationToken cancellationToken = default) =>
        SettleAsync(message, MessageSettlement.Defer(propertiesToModify), cancellationToken);

    /// <summary>
    /// Renews the message's lock now, in the pump's lease lane, and moves <see cref="ServiceBusReceivedMessage.LockedUntil"/>
    /// (which the pump's lease keeper schedules its next renewals from). Seldom needed: the keeper renews every lock the
    /// pump holds while its handler runs.
    /// </summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the broker has renewed the lock.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>; for a message of a session <see cref="ServiceBusFailureReason.SessionLockLost"/>), or the broker refused the renewal.</exception>
    public async Task RenewMessageLockAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken = default)
    {
        ThrowIfNotThisMessage(message);
        cancellationToken.ThrowIfCancellationRequested();
        if (IsSettled)
        {
            throw new InvalidOperationException($"Cannot renew the lock of message {Message.MessageId}: it was already settled by this handler.");
        }

        try
        {
            await _leaseLane.Run(() => _leased.RenewLockAsync(cancellationToken)).ConfigureAwait(true);
        }
        catch (LeaseLostException ex)
        {
            throw LockLost(_leased, $"Cannot renew the lock of message {Message.MessageId}", EntityPath, ex);
        }
        catch (TransientTransportException ex) when (ex.InnerException is ServiceBusException original)
        {
            ExceptionDispatchInfo.Throw(original);
        }
    }

    /// <summary>Completes (<paramref name="complete"/>) or abandons the message unless the handler settled it; the processor's part after the handler.</summary>
    internal Task SettleAfterHandlerAsync(bool complete) => complete
        ? SettleAsync(Message, "complete", () => Context.CompleteAsync(), CancellationToken.None)
        : SettleAsync(Message, "abandon", () => Context.AbandonAsync(), CancellationToken.None);

    /// <summary>A settlement with the SDK's <c>propertiesToModify</c> as its transport data, which the leased message sends with it.</summary>
    private Task SettleAsync(ServiceBusReceivedMessage message, MessageSettlement settlement, CancellationToken cancellationToken) =>
        SettleAsync(message, settlement.ToString(), () => Context.SettleAsync(settlement), cancellationToken);

    /// <summary>
    /// The SDK's exception for a lock lost under a handler: <see cref="ServiceBusFailureReason.MessageLockLost"/>, or for a
    /// message of a session <see cref="ServiceBusFailureReason.SessionLockLost"/> (the session's lock is its messages'
    /// lock, and the SDK reports it so).
    /// </summary>
    /// <param name="leased">The message.</param>
    /// <param name="what">What could not be done, the start of the exception's message (<c>Cannot complete message m1</c>).</param>
    /// <param name="entityPath">The entity's path.</param>
    /// <param name="inner">The exception that told the loss, or <see langword="null"/>.</param>
    internal static ServiceBusException LockLost(ServiceBusLeasedMessage leased, string what, string entityPath, Exception? inner) =>
        leased.SessionId is { } session
            ? new ServiceBusException($"{what}: the lock of session '{session}' was lost (it expired, or its receive link closed); the broker will deliver the session's messages again.", ServiceBusFailureReason.SessionLockLost, entityPath, inner)
            : new ServiceBusException($"{what}: its lock was lost (it expired, or its receive link closed); the broker will deliver it again.", ServiceBusFailureReason.MessageLockLost, entityPath, inner);

    private void ThrowIfNotThisMessage(ServiceBusReceivedMessage message)
    {
        ArgumentNullException.ThrowIfNull(message);
        if (!ReferenceEquals(message, Message))
        {
            throw new ArgumentException($"Only this handler call's message ({Message.MessageId}) can be settled or renewed with its arguments; the one given is {message.MessageId}.", nameof(message));
        }
    }

    private async Task SettleAsync(ServiceBusReceivedMessage message, string operation, Func<Task<bool>> settle, CancellationToken cancellationToken)
    {
        ThrowIfNotThisMessage(message);
        cancellationToken.ThrowIfCancellationRequested();
        if (Interlocked.Exchange(ref _settled, 1) != 0)
        {
            throw new InvalidOperationException($"Cannot {operation} message {Message.MessageId}: it was already settled by this handler (a message is completed, abandoned, dead-lettered or deferred once).");
        }

        if (await settle().ConfigureAwait(true))
        {
            return;
        }

        if (Context.LeaseState == MessageLeaseState.Lost)
        {
            var lost = LockLost(_leased, $"Cannot {operation} message {Message.MessageId}", EntityPath, inner: null);
            Volatile.Write(ref _lockLostThrown, lost);
            throw lost;
        }

        throw new ServiceBusException($"Cannot {operation} message {Message.MessageId}: the pump settled it first (abandoned at stop) or the broker refused the settlement (see the pump's log).", ServiceBusFailureReason.GeneralError, EntityPath);
    }
}
