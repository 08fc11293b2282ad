namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>A fault the broker answers with on demand (<see cref="ServiceBusTestFaults"/>).</summary>
public enum ServiceBusTestFault
{
    /// <summary>The lock is lost: status code 410 with <c>com.microsoft:message-lock-lost</c> (or <c>com.microsoft:session-lock-lost</c> for a session); the client reports <c>ServiceBusFailureReason.MessageLockLost</c> (or <c>SessionLockLost</c>).</summary>
    LockLost,

    /// <summary>The service is busy: status code 503 with <c>com.microsoft:server-busy</c>; the client reports <c>ServiceBusFailureReason.ServiceBusy</c>, a transient error.</summary>
    ServerBusy,

    /// <summary>The service timed out: status code 408 with <c>com.microsoft:timeout</c>; the client reports <c>ServiceBusFailureReason.ServiceTimeout</c>, a transient error.</summary>
    Timeout,
}
