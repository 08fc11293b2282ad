namespace LeaseSimulation.Tests.Scenario;

/// <summary>The demonstration's must-show outcomes at the seed's full scale, on one thread and virtual time.</summary>
public sealed class SingleThreadVirtualTimeTests
{
    [Fact]
    public void Fifo_Cpu1000_LosesMostMessages_AsInTheSeed()
    {
        var result = SeedScale.RunVirtual("fifo", 1000);

        result.Lost.Should().BeGreaterThanOrEqualTo(80);
        (result.Completed + result.Lost).Should().Be(100);
    }

    [Fact]
    public void Fifo_Cpu100_LosesAFewMessages_AsInTheSeed()
    {
        var result = SeedScale.RunVirtual("fifo", 100);

        result.Lost.Should().BeInRange(1, 10);
    }

    [Theory]
    [InlineData("priority", 100)]
    [InlineData("priority", 1000)]
    [InlineData("pump", 100)]
    [InlineData("pump", 1000)]
    public void PriorityStrategies_LoseNothing(string strategy, int cpuMs)
    {
        var result = SeedScale.RunVirtual(strategy, cpuMs);

        result.Lost.Should().Be(0);
        result.Completed.Should().Be(100);
    }

    [Theory]
    [InlineData("priority")]
    [InlineData("pump")]
    public void PriorityStrategies_Cpu1000_FinishWithinFivePercentOfTheCpuLimit(string strategy)
    {
        var result = SeedScale.RunVirtual(strategy, 1000);

        result.CpuLimitSeconds.Should().Be(2000);
        result.TotalSeconds.Should().BeInRange(2000, 2000 * 1.05);
    }

    [Theory]
    [InlineData("priority")]
    [InlineData("pump")]
    public void PriorityStrategies_RenewEveryLeaseWithinOneCpuOperation(string strategy)
    {
        var result = SeedScale.RunVirtual(strategy, 1000);

        result.MaxLeaseLatenessMs.Should().BeLessThanOrEqualTo(1000);
    }

    [Theory]
    [InlineData("priority", 100)]
    [InlineData("priority", 1000)]
    [InlineData("pump", 100)]
    [InlineData("pump", 1000)]
    public void PriorityStrategies_ThreeTimesTheMessages_LoseNothing(string strategy, int cpuMs)
    {
        var result = SeedScale.RunVirtual(strategy, cpuMs, messages: 300);

        result.Lost.Should().Be(0);
        result.Completed.Should().Be(300);
    }

    [Theory]
    [InlineData(100)]
    [InlineData(1000)]
    public void SeedYield_LosesNothing(int cpuMs)
    {
        var result = SeedScale.RunVirtual("seed-yield", cpuMs);

        result.Lost.Should().Be(0);
    }
}
