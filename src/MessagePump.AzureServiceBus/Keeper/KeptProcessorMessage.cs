using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>A message of a <see cref="ServiceBusProcessor"/>'s handler: renewed and settled through its <see cref="ProcessMessageEventArgs"/>.</summary>
internal sealed class KeptProcessorMessage(ProcessMessageEventArgs args) : KeptServiceBusMessage(args.Message)
{
    /// <inheritdoc />
    protected override DateTimeOffset SdkLockedUntil => Message.LockedUntil;

    /// <inheritdoc />
    protected override string LockName => $"the lock of {this}";

    /// <inheritdoc />
    protected override async Task<DateTimeOffset> RenewCoreAsync(CancellationToken cancellationToken)
    {
        await args.RenewMessageLockAsync(Message, cancellationToken).ConfigureAwait(false);
        return Message.LockedUntil;
    }

    /// <inheritdoc />
    protected override Task CompleteCoreAsync(CancellationToken cancellationToken) => args.CompleteMessageAsync(Message, cancellationToken);

    /// <inheritdoc />
    protected override Task AbandonCoreAsync(CancellationToken cancellationToken) => args.AbandonMessageAsync(Message, propertiesToModify: null, cancellationToken);

    /// <inheritdoc />
    protected override Task DeadLetterCoreAsync(string reason, string? description, CancellationToken cancellationToken) =>
        args.DeadLetterMessageAsync(Message, reason, description, cancellationToken);
}
