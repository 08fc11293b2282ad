using LeaseSimulation.Running;

namespace LeaseSimulation.Cli;

/// <summary>What the default run (no option that chooses runs) runs: a virtual-time table, then a real-clock demonstration.</summary>
/// <param name="VirtualTime">The seed's table on one thread and virtual time, every strategy (deterministic, under a second).</param>
/// <param name="Demonstration">The short real-clock rows, each with what it must show.</param>
public sealed record DefaultRunPlan(IReadOnlyList<PlannedRun> VirtualTime, IReadOnlyList<DemoRun> Demonstration);
