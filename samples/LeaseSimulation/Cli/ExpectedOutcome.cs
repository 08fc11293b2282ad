namespace LeaseSimulation.Cli;

/// <summary>What a row of the default run's real-clock demonstration must show, whatever the machine's load.</summary>
public enum ExpectedOutcome
{
    /// <summary>The consumer loses leases: its renewals wait, by construction, longer than the lease's slack.</summary>
    LosesLeases,

    /// <summary>The consumer completes every message and loses none: its renewals wait at most a bounded time.</summary>
    LosesNone,
}
