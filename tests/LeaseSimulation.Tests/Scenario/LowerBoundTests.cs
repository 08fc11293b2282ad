using LeaseSimulation.Results;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Tests.Scenario;

/// <summary>The lower bound: its three paths, computed from the run's own jitter draws.</summary>
public sealed class LowerBoundTests
{
    private static SimulationSettings NoJitter(int messages, int loops, int cpuMs) => new()
    {
        Messages = messages,
        Loops = loops,
        CpuTime = TimeSpan.FromMilliseconds(cpuMs),
        IoTime = TimeSpan.FromMilliseconds(1000),
        ReceiveTime = TimeSpan.FromMilliseconds(100),
        IoJitter = 0,
    };

    [Fact]
    public void WithoutJitter_ThePathsAreTheFormulas()
    {
        var bound = LowerBound.Compute(NoJitter(messages: 100, loops: 20, cpuMs: 10), cpuParallelism: 1);

        bound.CpuWork.Should().Be(TimeSpan.FromSeconds(0.1 + (100 * 20 * 0.01) + 1.0), "first receive + N×L×CPU + one last IO");
        bound.ReceiveChain.Should().Be(TimeSpan.FromSeconds((100 * 0.1) + (20 * 1.01)), "N receives, then the last message's path");
        bound.MessagePath.Should().Be(TimeSpan.FromSeconds(0.1 + (20 * 1.01)), "one receive, then one message's path");
        bound.Value.Should().Be(bound.ReceiveChain);
        bound.Binding.Should().Be("receive");
    }

    [Fact]
    public void CpuHeavy_TheCpuWorkBinds_AndParallelismDividesIt()
    {
        var settings = NoJitter(messages: 10, loops: 5, cpuMs: 1000);

        LowerBound.Compute(settings, 1).Value.Should().Be(TimeSpan.FromSeconds(0.1 + 50 + 1));
        LowerBound.Compute(settings, 1).Binding.Should().Be("cpu");
        LowerBound.Compute(settings, 2).CpuWork.Should().Be(TimeSpan.FromSeconds(0.1 + 25 + 1));
        LowerBound.Compute(settings, 1000).CpuWork.Should().Be(TimeSpan.FromSeconds(0.1 + 5 + 1), "at most one CPU operation per message runs at once");
    }

    [Fact]
    public void WithJitter_TheReceiveChainNeverFallsBelowTheShortestDrawsNorAboveTheLongest()
    {
        var settings = NoJitter(messages: 50, loops: 10, cpuMs: 10) with { IoJitter = 0.1, Seed = 7 };

        var bound = LowerBound.Compute(settings, 1);

        bound.ReceiveChain.TotalSeconds.Should().BeInRange((50 * 0.09) + (10 * (0.01 + 0.9)), (50 * 0.11) + (10 * (0.01 + 1.1)));
        bound.MessagePath.Should().BeLessThanOrEqualTo(bound.ReceiveChain);
        LowerBound.Compute(settings, 1).Should().Be(bound, "the draws are the seeded ones");
    }

    [Fact]
    public void Compute_RejectsNoParallelism()
    {
        var act = () => LowerBound.Compute(new SimulationSettings(), 0);

        act.Should().Throw<ArgumentOutOfRangeException>();
    }
}
