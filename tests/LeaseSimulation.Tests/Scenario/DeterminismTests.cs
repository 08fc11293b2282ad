namespace LeaseSimulation.Tests.Scenario;

/// <summary>Virtual time gives the same run every time.</summary>
public sealed class DeterminismTests
{
    [Theory]
    [InlineData("fifo")]
    [InlineData("seed-yield")]
    [InlineData("priority")]
    [InlineData("pump")]
    public void TwoRuns_GiveIdenticalResultsAndTimelines(string strategy)
    {
        var first = SeedScale.RunVirtual(strategy, 1000);
        var second = SeedScale.RunVirtual(strategy, 1000);

        second.Should().BeEquivalentTo(first, options => options.Excluding(r => r.WallTime));
        second.Timeline.Should().Equal(first.Timeline);
    }
}
