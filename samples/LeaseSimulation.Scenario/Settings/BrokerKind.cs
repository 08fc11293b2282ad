namespace LeaseSimulation.Settings;

/// <summary>Who judges leases: the scenario itself (embedded, in memory) or a PostgreSQL server through the transport.</summary>
public enum BrokerKind
{
    /// <summary>The embedded default: the scenario's tracker (and the in-memory lease broker for the pump) judge leases.</summary>
    Memory,

    /// <summary>A PostgreSQL server judges leases on its own clock (<c>PriorityAsync.MessagePump.PostgreSql</c>); needs the real clock.</summary>
    Postgres,
}
