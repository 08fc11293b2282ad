namespace PriorityAsync.Tests.Lanes;

/// <summary>The names that exception messages, thread names and metric tags are built from.</summary>
public class NamingTests
{
    [Fact]
    public void UnnamedSchedulers_GetDistinctNamesAfterTheirType()
    {
        using var first = new PriorityAsyncContext();
        using var second = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = "  " });
        using var tasks = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0 });

        first.Name.Should().MatchRegex(@"^PriorityAsyncContext-\d+$");
        second.Name.Should().MatchRegex(@"^PriorityAsyncContext-\d+$", "a blank name counts as none");
        second.Name.Should().NotBe(first.Name);
        tasks.Name.Should().MatchRegex(@"^PriorityTaskScheduler-\d+$");
    }

    [Fact]
    public void ToString_NamesTheSchedulerTheLaneAndItsRank()
    {
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = "ui" });

        context.ToString().Should().Be("PriorityAsyncContext 'ui'");
        context.GetLane(LanePriority.Processing).ToString().Should().Be("Processing (rank 1) of ui");
        context.GetLane(LanePriority.Processing).SynchronizationContext.ToString().Should().Be("Processing (rank 1) of ui");
    }

    [Fact]
    public void LaneOptions_ToString_ShowsTheStarvationBoundOnlyWhenThereIsOne()
    {
        new LaneOptions("Render").ToString().Should().Be("Render");
        new LaneOptions("Render", TimeSpan.FromSeconds(2)).ToString().Should().Be("Render (starvation bound 00:00:02)");
    }

    [Fact]
    public void LaneOptions_ANegativeStarvationBound_IsRejected_SayingWhatIsAllowed()
    {
        var create = () => new LaneOptions("Render", TimeSpan.FromTicks(-1));

        create.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("starvationBound").WithMessage("A lane's starvation bound must be zero or positive, or null for none.*");
    }

    [Fact]
    public void LaneOptions_AZeroStarvationBound_IsAllowed()
    {
        var options = new LaneOptions("Background", TimeSpan.Zero);

        options.StarvationBound.Should().Be(TimeSpan.Zero);
    }

    [Fact]
    public void Lanes_AreFoundByPriorityIndexerAndName_AndCarryTheirOptions()
    {
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions
        {
            Name = "custom",
            Lanes = [new LaneOptions("Urgent"), new LaneOptions("Bulk", TimeSpan.FromSeconds(5))],
        });

        context.GetLane(LanePriority.FromRank(1)).Should().BeSameAs(context.GetLane("Bulk"));
        context.GetLane(LanePriority.FromRank(0)).Should().BeSameAs(context.Lanes[0]);
        context.Lanes.Select(l => (l.Name, l.Priority.Rank, l.StarvationBound)).Should().Equal(("Urgent", 0, (TimeSpan?)null), ("Bulk", 1, TimeSpan.FromSeconds(5)));
        context.Lanes.Should().OnlyContain(l => ReferenceEquals(l.Scheduler, context));

        var unknownRank = context.Invoking(c => c.GetLane(LanePriority.FromRank(2))).Should().Throw<ArgumentOutOfRangeException>().Which;
        unknownRank.ParamName.Should().Be("priority");
        unknownRank.Message.Should().Contain("'custom' has 2 lane(s); the rank must be below 2");
        context.Invoking(c => c.GetLane("Lease")).Should().Throw<ArgumentException>().WithParameterName("name")
            .WithMessage("The scheduler 'custom' has no lane named 'Lease'; its lanes are Urgent, Bulk.*");
        context.Invoking(c => c.GetLane((string)null!)).Should().Throw<ArgumentNullException>().WithParameterName("name");
    }

    [Fact]
    public void Lanes_TheOptionsOfANewScheduler_AreCopied()
    {
        var options = new PrioritySchedulerOptions { Lanes = [new LaneOptions("A"), new LaneOptions("B")] };
        using var context = new PriorityAsyncContext(options);

        options.Lanes.Add(new LaneOptions("C"));

        context.Lanes.Select(l => l.Name).Should().Equal("A", "B");
    }
}
