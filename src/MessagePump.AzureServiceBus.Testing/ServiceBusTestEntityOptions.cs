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
}
