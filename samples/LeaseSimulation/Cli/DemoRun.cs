using LeaseSimulation.Running;

namespace LeaseSimulation.Cli;

/// <summary>One row of the default run's real-clock demonstration: the run, what it must show and why.</summary>
/// <param name="Run">The run (real clock, time-scaled).</param>
/// <param name="Expected">What it must show.</param>
/// <param name="Reason">Why, in a few words: what bounds or stretches the renewals' wait.</param>
public sealed record DemoRun(PlannedRun Run, ExpectedOutcome Expected, string Reason);
