using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// A message of a <see cref="ServiceBusSessionProcessor"/>'s handler, kept by its session's lock: renewal renews the
/// session lock (<see cref="ProcessSessionMessageEventArgs.RenewSessionLockAsync"/>), whose expiry is the lease's;
/// settlement goes through the args.
/// </summary>
internal sealed class KeptSessionMessage(ProcessSessionMessageEventArgs args) : KeptServiceBusMessage(args.Message)
{
    /// <inheritdoc />
    protected override DateTimeOffset SdkLockedUntil => args.SessionLockedUntil;

    /// <inheritdoc />
    protected override string LockName => $"the lock of session '{args.SessionId}' ({this})";

    /// <inheritdoc />
    public override string ToString() => $"{base.ToString()} of session '{args.SessionId}'";

    /// <inheritdoc />
    protected override async Task<DateTimeOffset> RenewCoreAsync(CancellationToken cancellationToken)
    {
        await args.RenewSessionLockAsync(cancellationToken).ConfigureAwait(false);
        return args.SessionLockedUntil;
    }

    /// <inheritdoc />
    protected override Task CompleteCoreAsync(CancellationToken cancellationToken) => args.CompleteMessageAsync(Message, cancellationToken);

    /// <inheritdoc />
    protected override Task AbandonCoreAsync(CancellationToken cancellationToken) => args.AbandonMessageAsync(Message, propertiesToModify: null, cancellationToken);

    /// <inheritdoc />
    protected override Task DeadLetterCoreAsync(string reason, string? description, CancellationToken cancellationToken) =>
        args.DeadLetterMessageAsync(Message, reason, description, cancellationToken);
}
