namespace PriorityAsync.Reliability.Tests.Swarm;

/// <summary>What a swarm exercised, added up over its seeds (so a swarm that tests nothing shows it).</summary>
internal sealed class SwarmTotals
{
    private long _sent;
    private long _completed;
    private long _deadLettered;
    private long _leasesLost;
    private long _abandonedAtStop;
    private long _unsettledAtStop;
    private long _transientFaults;
    private long _renewals;

    public void Add(SwarmOutcome outcome)
    {
        Interlocked.Add(ref _sent, outcome.BrokerAtEnd.Sent);
        Interlocked.Add(ref _completed, outcome.BrokerAtEnd.Completed);
        Interlocked.Add(ref _deadLettered, outcome.BrokerAtEnd.DeadLettered);
        Interlocked.Add(ref _leasesLost, outcome.BrokerAtEnd.LeasesLost);
        Interlocked.Add(ref _abandonedAtStop, outcome.Stopped.AbandonedAtStop);
        Interlocked.Add(ref _unsettledAtStop, outcome.Stopped.UnsettledAtStop);
        Interlocked.Add(ref _transientFaults, outcome.BrokerAtEnd.TransientFaults);
        Interlocked.Add(ref _renewals, outcome.BrokerAtEnd.Renewals);
    }

    public override string ToString() =>
        $"messages {_sent}: completed {_completed}, dead-lettered {_deadLettered}; leases lost {_leasesLost}, " +
        $"abandoned at stop {_abandonedAtStop}, unsettled at stop {_unsettledAtStop}, transient faults {_transientFaults}, renewals {_renewals}";
}
