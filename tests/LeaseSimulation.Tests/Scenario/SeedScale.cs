using LeaseSimulation.Results;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Tests.Scenario;

/// <summary>Runs the scenario at the seed's scale on one thread and virtual time.</summary>
internal static class SeedScale
{
    public static SimulationResult RunVirtual(string strategy, int cpuMs, int messages = 100) =>
        SimulationRunner.Run(
            new SimulationSettings
            {
                Context = ContextKind.SingleThread,
                Clock = ClockKind.Virtual,
                CpuTime = TimeSpan.FromMilliseconds(cpuMs),
                Messages = messages,
            },
            StrategyCatalog.Get(strategy));
}
