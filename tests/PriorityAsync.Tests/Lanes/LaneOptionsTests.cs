namespace PriorityAsync.Tests.Lanes;

public class LaneOptionsTests
{
    [Theory]
    [InlineData("")]
    [InlineData("  ")]
    public void BlankName_Throws(string name)
    {
        var create = () => new LaneOptions(name);

        create.Should().Throw<ArgumentException>().WithParameterName("name");
    }

    [Fact]
    public void NegativeStarvationBound_Throws()
    {
        var create = () => new LaneOptions("Render", TimeSpan.FromMilliseconds(-1));

        create.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("starvationBound");
    }

    [Fact]
    public void LanePriority_OrdersByRank_MostUrgentFirst()
    {
        LanePriority.Lease.Rank.Should().BeLessThan(LanePriority.Processing.Rank);
        LanePriority.Processing.Rank.Should().BeLessThan(LanePriority.Receive.Rank);
        LanePriority.FromRank(2).Should().Be(LanePriority.Receive);
        var invalid = () => LanePriority.FromRank(PrioritySchedulerOptions.MaxLaneCount);
        invalid.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("rank");
    }
}
