namespace PriorityAsync.Tests.Lanes;

/// <summary>A lane priority is its rank: equality, ordering and hashing follow the rank, and the name tells it apart in logs.</summary>
public class LanePriorityTests
{
    [Fact]
    public void EqualityOperators_AndRank_SmallerIsMoreUrgent()
    {
        var lease = LanePriority.Lease;
        var processing = LanePriority.Processing;
        var alsoProcessing = LanePriority.FromRank(1);

        (processing == alsoProcessing).Should().BeTrue();
        (processing == lease).Should().BeFalse();
        (processing != lease).Should().BeTrue();
        (processing != alsoProcessing).Should().BeFalse();

        (lease.Rank < processing.Rank).Should().BeTrue("the rank orders the lanes, most urgent first");
    }

    [Fact]
    public void EqualsAndHashCode_AgreeWithTheRank()
    {
        LanePriority.Receive.Equals(LanePriority.FromRank(2)).Should().BeTrue();
        LanePriority.Receive.Equals(LanePriority.Lease).Should().BeFalse();
        LanePriority.Receive.Equals((object)LanePriority.FromRank(2)).Should().BeTrue();
        LanePriority.Receive.Equals((object)2).Should().BeFalse("a bare rank is not a lane priority");
        LanePriority.Receive.Equals(null).Should().BeFalse();

        LanePriority.FromRank(7).GetHashCode().Should().Be(LanePriority.FromRank(7).GetHashCode());
        new[] { LanePriority.FromRank(5), LanePriority.Lease, LanePriority.FromRank(5) }.Distinct().Should().HaveCount(2);

    }

    [Fact]
    public void ToString_NamesTheDefaultLanes_AndShowsOtherRanks()
    {
        LanePriority.Lease.ToString().Should().Be("Lease (rank 0)");
        LanePriority.Processing.ToString().Should().Be("Processing (rank 1)");
        LanePriority.Receive.ToString().Should().Be("Receive (rank 2)");
        LanePriority.FromRank(3).ToString().Should().Be("rank 3");
    }

    [Fact]
    public void FromRank_AcceptsZeroToTheLastLane_AndRejectsTheRest()
    {
        LanePriority.FromRank(0).Should().Be(LanePriority.Lease);
        LanePriority.FromRank(PrioritySchedulerOptions.MaxLaneCount - 1).Rank.Should().Be(PrioritySchedulerOptions.MaxLaneCount - 1);

        var negative = () => LanePriority.FromRank(-1);
        var tooLarge = () => LanePriority.FromRank(PrioritySchedulerOptions.MaxLaneCount);

        negative.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("rank");
        tooLarge.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("rank");
    }
}
