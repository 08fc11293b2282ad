using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// What a <see cref="ServiceBusPumpProcessor"/> hands its <see cref="ServiceBusPumpProcessor.ProcessMessageAsync"/>
/// handler: the message and the calls that settle it, shaped like the SDK's <see cref="ProcessMessageEventArgs"/>.
/// Each settlement runs in the pump's lease lane and is answered by the broker (see <see cref="ServiceBusLeasedMessage"/>); a message is settled once.
/// </summary>
/// <remarks>
/// <c>DeferMessageAsync</c> and the <c>propertiesToModify</c> overloads are not offered: the pump's transport contract
/// (<see cref="ILeasedMessage"/>) settles by complete, abandon and dead-letter only, so that every message ends
/// completed or dead-lettered and nothing is parked where the pump cannot see it.
/// </remarks>
public sealed class ServiceBusPumpMessageEventArgs : EventArgs
{
    private readonly ServiceBusLeasedMessage _leased;
    private int _settled;
    private ServiceBusException? _lockLostThrown;

    internal ServiceBusPumpMessageEventArgs(MessageContext context, ServiceBusLeasedMessage leased, string fullyQualifiedNamespace, CancellationToken cancellationToken)
    {
        Context = context;
        _leased = leased;
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

    /// <summary>Gets the path of the queue or subscription the message came from.</summary>
    public string EntityPath => _leased.Entity.Path;

    /// <summary>Gets the namespace's host name.</summary>
    public string FullyQualifiedNamespace { get; }

    /// <summary>
    /// Gets the pump's context of this message: its lanes and <see cref="MessageContext.ShouldYield"/>, so that a
    /// CPU-heavy handler can <c>await PriorityScheduler.YieldIfNeeded()</c> and let lock renewals run.
    /// </summary>
    public MessageContext Context { get; }

    /// <summary>Gets whether the handler has settled the message (or tried to).</summary>
    public bool IsSettled => Volatile.Read(ref _settled) != 0;

    /// <summary>Gets the <see cref="ServiceBusFailureReason.MessageLockLost"/> a settlement threw to the handler, or <see langword="null"/>.</summary>
    internal ServiceBusException? LockLostThrown => Volatile.Read(ref _lockLostThrown);

    /// <summary>Completes the message: it was processed.</summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers or the client's operation timeout (<see cref="ServiceBusRetryOptions.TryTimeout"/>) ends it, not with this token.</param>
    /// <returns>A task that completes when the broker has completed the message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>), or the broker refused the settlement.</exception>
    public Task CompleteMessageAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken = default) =>
        SettleAsync(message, "complete", () => Context.CompleteAsync(), cancellationToken);

    /// <summary>Abandons the message: the broker makes it visible again for another delivery, with its delivery count raised.</summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers or the client's operation timeout (<see cref="ServiceBusRetryOptions.TryTimeout"/>) ends it, not with this token.</param>
    /// <returns>A task that completes when the broker has released the message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>), or the broker refused the settlement.</exception>
    public Task AbandonMessageAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken = default) =>
        SettleAsync(message, "abandon", () => Context.AbandonAsync(), cancellationToken);

    /// <summary>Moves the message to the dead-letter queue with a reason and a description.</summary>
    /// <param name="message">The message: <see cref="Message"/>.</param>
    /// <param name="deadLetterReason">Why the message cannot be processed (the <c>DeadLetterReason</c> property); required.</param>
    /// <param name="deadLetterErrorDescription">More detail (the <c>DeadLetterErrorDescription</c> property); <see langword="null"/> for none.</param>
    /// <param name="cancellationToken">Checked before the call; a settlement under way ends when the broker answers or the client's operation timeout (<see cref="ServiceBusRetryOptions.TryTimeout"/>) ends it, not with this token.</param>
    /// <returns>A task that completes when the broker has dead-lettered the message.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="message"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="message"/> is not this handler call's message, or <paramref name="deadLetterReason"/> is empty.</exception>
    /// <exception cref="InvalidOperationException">The message was already settled by this handler.</exception>
    /// <exception cref="ServiceBusException">The lock was lost (<see cref="ServiceBusFailureReason.MessageLockLost"/>), or the broker refused the settlement.</exception>
    public Task DeadLetterMessageAsync(ServiceBusReceivedMessage message, string deadLetterReason, string? deadLetterErrorDescription = null, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(deadLetterReason);
        return SettleAsync(
            message,
            "dead-letter",
            () => Context.DeadLetterAsync(deadLetterReason, deadLetterErrorDescription),
            cancellationToken);
    }

    /// <summary>Completes (<paramref name="complete"/>) or abandons the message unless the handler settled it; the processor's part after the handler.</summary>
    internal Task SettleAfterHandlerAsync(bool complete) => complete
        ? SettleAsync(Message, "complete", () => Context.CompleteAsync(), CancellationToken.None)
        : SettleAsync(Message, "abandon", () => Context.AbandonAsync(), CancellationToken.None);

    private async Task SettleAsync(ServiceBusReceivedMessage message, string operation, Func<Task<bool>> settle, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(message);
        if (!ReferenceEquals(message, Message))
        {
            throw new ArgumentException($"Only this handler call's message ({Message.MessageId}) can be settled with its arguments; the one given is {message.MessageId}.", nameof(message));
        }

        cancellationToken.ThrowIfCancellationRequested();
        if (Interlocked.Exchange(ref _settled, 1) != 0)
        {
            throw new InvalidOperationException($"Cannot {operation} message {Message.MessageId}: it was already settled by this handler (a message is completed, abandoned or dead-lettered once).");
        }

        if (await settle().ConfigureAwait(true))
        {
            return;
        }

        if (Context.LeaseState == MessageLeaseState.Lost)
        {
            var lost = new ServiceBusException($"Cannot {operation} message {Message.MessageId}: its lock was lost (it expired, or its receive link closed); the broker will deliver it again.", ServiceBusFailureReason.MessageLockLost, EntityPath);
            Volatile.Write(ref _lockLostThrown, lost);
            throw lost;
        }

        throw new ServiceBusException($"Cannot {operation} message {Message.MessageId}: the pump settled it first (abandoned at stop) or the broker refused the settlement (see the pump's log).", ServiceBusFailureReason.GeneralError, EntityPath);
    }
}
