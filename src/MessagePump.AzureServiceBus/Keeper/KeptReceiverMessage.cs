using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>A message the user's own loop received from a <see cref="ServiceBusReceiver"/>: renewed and settled through that receiver.</summary>
internal sealed class KeptReceiverMessage(ServiceBusReceiver receiver, ServiceBusReceivedMessage message) : KeptServiceBusMessage(message)
{
    /// <inheritdoc />
    protected override DateTimeOffset SdkLockedUntil => Message.LockedUntil;

    /// <inheritdoc />
    protected override string LockName => $"the lock of {this}";

    /// <inheritdoc />
    public override string ToString() => $"{base.ToString()} of '{receiver.EntityPath}'";

    /// <inheritdoc />
    protected override async Task<DateTimeOffset> RenewCoreAsync(CancellationToken cancellationToken)
    {
        await receiver.RenewMessageLockAsync(Message, cancellationToken).ConfigureAwait(false);
        return Message.LockedUntil;
    }

    /// <inheritdoc />
    protected override Task CompleteCoreAsync(CancellationToken cancellationToken) => receiver.CompleteMessageAsync(Message, cancellationToken);

    /// <inheritdoc />
    protected override Task AbandonCoreAsync(CancellationToken cancellationToken) => receiver.AbandonMessageAsync(Message, propertiesToModify: null, cancellationToken);

    /// <inheritdoc />
    protected override Task DeadLetterCoreAsync(string reason, string? description, CancellationToken cancellationToken) =>
        receiver.DeadLetterMessageAsync(Message, reason, description, cancellationToken);
}
