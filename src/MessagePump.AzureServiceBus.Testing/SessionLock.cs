namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>The state of one session of an entity: who holds it, until when, and its session state.</summary>
internal sealed class SessionLock
{
    public SessionLock(string sessionId) => SessionId = sessionId;

    public string SessionId { get; }

    public IConsumer? Holder { get; set; }

    public DateTimeOffset LockedUntil { get; set; }

    public byte[]? State { get; set; }
}
