namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>A delivery decided under the broker's lock and sent on its consumer's link after the lock is released.</summary>
internal sealed record PendingDelivery(IConsumer Consumer, ServiceBusTestQueue Queue, StoredMessage Message, Guid LockToken, int HeaderDeliveryCount, DateTimeOffset LockedUntil);
