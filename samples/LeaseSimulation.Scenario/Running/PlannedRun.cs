using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Running;

/// <summary>One row of a matrix: a strategy and the settings to run it with.</summary>
/// <param name="Settings">The settings, including the context and clock.</param>
/// <param name="Strategy">The strategy.</param>
public sealed record PlannedRun(SimulationSettings Settings, ConsumerStrategy Strategy)
{
    /// <summary>Gets a short label, e.g. <c>single-thread priority cpu=1000ms n=100</c>.</summary>
    public string Label =>
        $"{SettingNames.Of(Settings.Context)} {Strategy.Name} cpu={Settings.CpuTime.TotalMilliseconds:0}ms n={Settings.Messages} ({SettingNames.Of(Settings.Clock)}{(Settings.Broker == BrokerKind.Memory ? "" : ", " + SettingNames.Of(Settings.Broker))})";
}
