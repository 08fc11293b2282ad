namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// What a <see cref="LeaseKeeper"/> is told of a kept Service Bus message's source: only a lock duration no longer than
/// the entity's (the lock left when it was kept), which lets the keeper pipeline renewals while answers wait. Renewals
/// go through the message (<see cref="IMessageSource.RenewBatchAsync"/>'s default); nothing is received through it.
/// </summary>
internal sealed class LockDurationHint(TimeSpan lockDuration) : IMessageSource
{
    /// <inheritdoc />
    public TimeSpan? LockDuration { get; } = lockDuration;

    /// <inheritdoc />
    public string MessagingSystem => ServiceBusMessageSource.MessagingSystemName;

    /// <inheritdoc />
    public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        throw new NotSupportedException("A kept Service Bus message's source only tells the keeper its lock duration; receive with the SDK.");
}
