using LeaseSimulation.Results;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Tests.Scenario;

/// <summary>Runs the scenario at the seed's scale on one thread (single-thread, or hosted) and virtual time.</summary>
internal static class SeedScale
{
    public static SimulationResult RunVirtual(string strategy, int cpuMs, int messages = 100, ContextKind context = ContextKind.SingleThread) =>
        SimulationRunner.Run(
            new SimulationSettings
            {
                Context = context,
                Clock = ClockKind.Virtual,
                CpuTime = TimeSpan.FromMilliseconds(cpuMs),
                Messages = messages,
            },
            StrategyCatalog.Get(strategy));
}
