namespace LeaseSimulation.Tests.Scenario;

/// <summary>The must-show outcomes of issue 4 at the seed's full scale, on one thread and virtual time.</summary>
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
    [InlineData(100)]
    [InlineData(1000)]
    public void Priority_LosesNothing(int cpuMs)
    {
        var result = SeedScale.RunVirtual("priority", cpuMs);

        result.Lost.Should().Be(0);
        result.Completed.Should().Be(100);
    }

    [Fact]
    public void Priority_Cpu1000_FinishesWithinFivePercentOfTheCpuLimit()
    {
        var result = SeedScale.RunVirtual("priority", 1000);

        result.CpuLimitSeconds.Should().Be(2000);
        result.TotalSeconds.Should().BeInRange(2000, 2000 * 1.05);
    }

    [Fact]
    public void Priority_RenewsEveryLeaseWithinOneCpuOperation()
    {
        var result = SeedScale.RunVirtual("priority", 1000);

        result.MaxLeaseLatenessMs.Should().BeLessThanOrEqualTo(1000);
    }

    [Theory]
    [InlineData(100)]
    [InlineData(1000)]
    public void Priority_ThreeTimesTheMessages_LosesNothing(int cpuMs)
    {
        var result = SeedScale.RunVirtual("priority", cpuMs, messages: 300);

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
