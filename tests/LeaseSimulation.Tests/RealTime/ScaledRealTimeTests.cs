using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;
using PriorityAsync.Tests.Shared;

namespace LeaseSimulation.Tests.RealTime;

/// <summary>
/// A few short runs on the scaled wall clock, with generous assertions (never tight timings). At a time scale of 0.05
/// a lease lasts 250 ms and is renewed every 100 ms, so "loses nothing" is asserted only when the process was never
/// held back as long as that margin (lease − renew interval − one CPU slice, scaled: 145 ms), as the probe measured:
/// a longer stop of the process, on a loaded machine, is one that no strategy survives.
/// </summary>
public sealed class ScaledRealTimeTests
{
    private static readonly TimeSpan Margin =
        (SimulationSettings.DefaultLeaseDuration - SimulationSettings.DefaultRenewInterval - TimeSpan.FromMilliseconds(100)) * 0.05;

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
        using var probe = PauseProbe.Start();
        var result = SimulationRunner.Run(Small(ContextKind.StarvedPool), StrategyCatalog.Get(strategy));

        if (probe.LongestPause < Margin)
        {
            result.Lost.Should().Be(0, "the process was held back at most {0} ms", probe.LongestPause.TotalMilliseconds);
            result.Completed.Should().Be(20);
        }
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
        using var probe = PauseProbe.Start();
        var result = SimulationRunner.Run(Small(ContextKind.ThreadPool), new PriorityStrategy());

        if (probe.LongestPause < Margin)
        {
            result.Lost.Should().Be(0, "the process was held back at most {0} ms", probe.LongestPause.TotalMilliseconds);
        }
    }
}
