namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>Options of a queue or a subscription created on a <see cref="ServiceBusTestBroker"/>.</summary>
public sealed class ServiceBusTestEntityOptions
{
    /// <summary>How long a received message stays locked without renewal (and how long a session lock lasts). Must be positive. Default 60 seconds.</summary>
    public TimeSpan LockDuration { get; set; } = TimeSpan.FromSeconds(60);

    /// <summary>Deliveries after which a message whose lock expired or that was abandoned moves to the dead-letter sub-queue. Must be at least 1. Default 10.</summary>
    public int MaxDeliveryCount { get; set; } = 10;

    /// <summary>Whether the entity requires sessions: every message needs a session id and receivers must accept a session.</summary>
    public bool RequiresSession { get; set; }

    /// <summary>
    /// The time-to-live of a message that sets none, and the longest a message's own time-to-live can be (as the service's
    /// DefaultMessageTimeToLive). Counted from the enqueue time (a scheduled message's scheduled time) on the broker's clock.
    /// Must be positive. Default <see cref="TimeSpan.MaxValue"/> (messages never expire).
    /// </summary>
    public TimeSpan DefaultMessageTimeToLive { get; set; } = TimeSpan.MaxValue;

    /// <summary>Whether an expired message moves to the dead-letter sub-queue (reason <c>TTLExpiredException</c>) instead of being dropped (as the service's DeadLetteringOnMessageExpiration).</summary>
    public bool DeadLetteringOnMessageExpiration { get; set; }
}
