namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>What the broker answers to a settlement (a disposition or an update-disposition request).</summary>
internal enum SettleResult
{
    Done,
    LockLost,
    SessionLockLost,
    NotSupported,
}
