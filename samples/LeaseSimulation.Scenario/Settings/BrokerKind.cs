namespace LeaseSimulation.Settings;

/// <summary>Who judges leases: the scenario itself (embedded, in memory), a PostgreSQL server or Azure Service Bus through a transport.</summary>
public enum BrokerKind
{
    /// <summary>The embedded default: the scenario's tracker (and the in-memory lease broker for the pump) judge leases.</summary>
    Memory,

    /// <summary>A PostgreSQL server judges leases on its own clock (<c>PriorityAsync.MessagePump.PostgreSql</c>); needs the real clock.</summary>
    Postgres,

    /// <summary>
    /// Azure Service Bus judges leases (locks) on its own clock, through the real Azure.Messaging.ServiceBus client: an
    /// in-process test broker started for each run, or the queue a connection string names. A lost lock is redelivered
    /// (up to 10 deliveries), so work can be done twice. Needs the real clock.
    /// </summary>
    ServiceBus,
}
