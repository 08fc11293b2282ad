using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Tests.RealTime;

/// <summary>A few short runs on the scaled wall clock, with generous assertions (never tight timings).</summary>
public sealed class ScaledRealTimeTests
{
    private static SimulationSettings Small(ContextKind context) => new()
    {
        Context = context,
        Clock = ClockKind.Real,
        TimeScale = 0.05,
        Messages = 20,
        Loops = 5,
        CpuTime = TimeSpan.FromMilliseconds(100),
    };

    [Theory]
    [InlineData("priority")]
    [InlineData("pump")]
    public void PriorityStrategies_OnStarvedPool_LoseNothing(string strategy)
    {
        var result = SimulationRunner.Run(Small(ContextKind.StarvedPool), StrategyCatalog.Get(strategy));

        result.Lost.Should().Be(0);
        result.Completed.Should().Be(20);
    }

    [Fact]
    public void Fifo_OnStarvedPool_LosesMessages()
    {
        var result = SimulationRunner.Run(Small(ContextKind.StarvedPool), new FifoStrategy());

        result.Lost.Should().BeGreaterThan(0);
    }

    [Fact]
    public void Priority_OnThreadPoolContext_LosesNothing()
    {
        var result = SimulationRunner.Run(Small(ContextKind.ThreadPool), new PriorityStrategy());

        result.Lost.Should().Be(0);
    }
}
