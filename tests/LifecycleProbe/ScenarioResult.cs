namespace PriorityAsync.LifecycleProbe;

/// <summary>What a scenario observed.</summary>
/// <param name="Passed">Whether every awaiting piece of code resumed as the shutdown contract says.</param>
/// <param name="Detail">What was observed, printed after the verdict.</param>
internal readonly record struct ScenarioResult(bool Passed, string Detail);
