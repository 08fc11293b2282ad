using PriorityAsync.MessagePump;

namespace PriorityAsync.Reliability.Tests.Swarm;

/// <summary>What one swarm run ended with: the books at the stop and at the end, and every invariant it broke.</summary>
internal sealed record SwarmOutcome(
    int Seed,
    MessagePumpStatistics Stopped,
    InMemoryQueueStatistics BrokerAtStop,
    MessagePumpStatistics Drain,
    InMemoryQueueStatistics BrokerAtEnd,
    TimeSpan VirtualDuration,
    IReadOnlyList<string> Violations)
{
    /// <summary>Gets a one-line summary for failure messages.</summary>
    public string Describe() =>
        $"seed {Seed}: sent {BrokerAtEnd.Sent}, completed {BrokerAtEnd.Completed}, dead-lettered {BrokerAtEnd.DeadLettered}, " +
        $"leases lost {BrokerAtEnd.LeasesLost}, locked at stop {BrokerAtStop.InFlight}, {VirtualDuration} of virtual time; " +
        $"broke: {string.Join("; ", Violations)}";
}
