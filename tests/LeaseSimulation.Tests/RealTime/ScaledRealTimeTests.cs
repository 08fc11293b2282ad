using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Tests.RealTime;

/// <summary>
/// A few short runs on the scaled wall clock: the real-clock path of every context works and every message ends exactly
/// once, as done or lost. Whether a strategy keeps every lease on the real clock is a claim about the machine's spare
/// CPU as much as about the strategy (at a time scale of 0.05 a lease lasts 250 ms and a CPU slice of 5 ms takes ten
/// times as long on a machine at load 20), so it is not asserted here: the virtual-time scenarios prove it
/// deterministically (Scenario/), and the real-clock figures are measured with the simulation's command line, with
/// the load recorded (docs/benchmarks.md, "Real-clock lease keeping").
/// </summary>
public sealed class ScaledRealTimeTests
{
    private const int Messages = 20;

    private static SimulationSettings Small(ContextKind context) => new()
    {
        Context = context,
        Clock = ClockKind.Real,
        TimeScale = 0.05,
        Messages = Messages,
        Loops = 5,
        CpuTime = TimeSpan.FromMilliseconds(100),
    };

    [Theory]
    [InlineData("priority")]
    [InlineData("pump")]
    public void PriorityStrategies_OnStarvedPool_EndEveryMessageOnce(string strategy)
    {
        var result = SimulationRunner.Run(Small(ContextKind.StarvedPool), StrategyCatalog.Get(strategy));

        result.Clock.Should().Be("real");
        (result.Completed + result.Lost).Should().Be(Messages, "each message ends once, as done or lost ({0} lost)", result.Lost);
    }

    [Fact]
    public void Fifo_OnStarvedPool_LosesMessages()
    {
        // A load only makes FIFO lose more: its renewals wait behind every queued slice.
        var result = SimulationRunner.Run(Small(ContextKind.StarvedPool), new FifoStrategy());

        result.Lost.Should().BeGreaterThan(0);
        (result.Completed + result.Lost).Should().Be(Messages);
    }

    [Fact]
    public void Priority_OnThreadPoolContext_EndsEveryMessageOnce()
    {
        var result = SimulationRunner.Run(Small(ContextKind.ThreadPool), new PriorityStrategy());

        (result.Completed + result.Lost).Should().Be(Messages, "each message ends once, as done or lost ({0} lost)", result.Lost);
    }
}
