namespace PriorityAsync.Tests.Scheduling;

public class PrioritySchedulerOptionsTests
{
    public static TheoryData<string, Action<PriorityTaskSchedulerOptions>> InvalidOptions => new()
    {
        { "Lanes", o => o.Lanes = [] },
        { "Lanes", o => o.Lanes = null! },
        { "Lanes", o => o.Lanes = [new LaneOptions("A"), null!] },
        { "Lanes", o => o.Lanes = [new LaneOptions("A"), new LaneOptions("A")] },
        { "Lanes", o => o.Lanes = Enumerable.Range(0, 33).Select(i => new LaneOptions($"L{i}")).ToList() },
        { "YieldQuantum", o => o.YieldQuantum = TimeSpan.Zero },
        { "StallThreshold", o => o.StallThreshold = TimeSpan.FromSeconds(-1) },
        { "WorkerCount", o => o.WorkerCount = 0 },
        { "Mode", o => o.Mode = (PriorityWorkerMode)7 },
        { "TimeProvider", o => o.TimeProvider = new VirtualTimeProvider() },
    };

    [Theory]
    [MemberData(nameof(InvalidOptions))]
    public void PriorityTaskScheduler_InvalidOption_ThrowsNamingTheOption(string option, Action<PriorityTaskSchedulerOptions> breakIt)
    {
        var options = new PriorityTaskSchedulerOptions();
        breakIt(options);

        var create = () => new PriorityTaskScheduler(options);

        create.Should().Throw<ArgumentException>().Which.ParamName.Should().Be(option);
    }

    [Fact]
    public void PriorityAsyncContext_InvalidOption_ThrowsNamingTheOption()
    {
        var create = () => new PriorityAsyncContext(new PrioritySchedulerOptions { Lanes = [new LaneOptions("Only"), new LaneOptions("Only")] });

        create.Should().Throw<ArgumentException>().WithParameterName("Lanes").WithMessage("*'Only' twice*");
    }

    [Fact]
    public void UserDefinedLanes_EightOrMore_AreOrderedByPosition()
    {
        var names = Enumerable.Range(0, 10).Select(i => $"lane{i}").ToList();
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { Lanes = names.Select(n => new LaneOptions(n)).ToList() });

        context.Lanes.Select(l => l.Name).Should().Equal(names);
        context.GetLane("lane7").Priority.Should().Be(LanePriority.FromRank(7));
        context.Invoking(c => c.GetLane("missing")).Should().Throw<ArgumentException>().WithParameterName("name").WithMessage("*lane0*");
        context.Invoking(c => c.GetLane(LanePriority.FromRank(10))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("priority");
    }
}
