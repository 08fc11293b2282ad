using LeaseSimulation.Settings;

namespace LeaseSimulation.Tests.Scenario;

/// <summary>
/// The demonstration's must-show outcomes on <c>--context hosted</c> (the consumer on a FIFO single-thread host it does
/// not own), at the seed's scale on virtual time: fifo keeps the host's order and loses leases, the lanes hosted on the
/// same thread lose none.
/// </summary>
public sealed class HostedVirtualTimeTests
{
    [Fact]
    public void Fifo_Cpu1000_LosesAtLeastHalf()
    {
        var result = SeedScale.RunVirtual("fifo", 1000, context: ContextKind.Hosted);

        result.Lost.Should().BeGreaterThanOrEqualTo(50);
        (result.Completed + result.Lost).Should().Be(100);
    }

    [Theory]
    [InlineData("priority")]
    [InlineData("pump")]
    public void PriorityStrategies_Cpu1000_LoseNothing_WithinTenPercentOfTheCpuLimit(string strategy)
    {
        var result = SeedScale.RunVirtual(strategy, 1000, context: ContextKind.Hosted);

        result.Lost.Should().Be(0);
        result.Completed.Should().Be(100);
        result.TotalSeconds.Should().BeLessThanOrEqualTo(result.CpuLimitSeconds * 1.1);
    }
}
