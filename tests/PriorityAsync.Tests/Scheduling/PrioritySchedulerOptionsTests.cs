namespace PriorityAsync.Tests.Scheduling;

public class PrioritySchedulerOptionsTests
{
    // Theory rows are case names, not delegates: xunit cannot serialize a delegate, so rows of delegates run as one test
    // case, and tools that map tests to the code they cover (Stryker) lose them.
    // Theory rows are case names, not delegates: xunit cannot serialize a delegate, so rows of delegates run as one test
    // case, and tools that map tests to the code they cover (Stryker) lose them.
    private static readonly Dictionary<string, (Action<PriorityTaskSchedulerOptions> BreakIt, string Says)> Invalid = new()
    {
        ["Lanes: none"] = (o => o.Lanes = [], "*Lanes must contain at least one lane*"),
        ["Lanes: null"] = (o => o.Lanes = null!, "*Lanes must contain at least one lane*"),
        ["Lanes: a null lane"] = (o => o.Lanes = [new LaneOptions("A"), null!], "*Lanes must not contain null*"),
        ["Lanes: a name twice"] = (o => o.Lanes = [new LaneOptions("A"), new LaneOptions("A")], "*lane name 'A' twice*"),
        ["Lanes: 33 lanes"] = (o => o.Lanes = Enumerable.Range(0, 33).Select(i => new LaneOptions($"L{i}")).ToList(), "*Lanes may contain at most 32 lanes*"),
        ["YieldQuantum: zero"] = (o => o.YieldQuantum = TimeSpan.Zero, "*YieldQuantum must be positive*"),
        ["StallThreshold: negative"] = (o => o.StallThreshold = TimeSpan.FromSeconds(-1), "*StallThreshold must be positive*"),
        ["WorkerCount: zero"] = (o => o.WorkerCount = 0, "*WorkerCount must be between 1 and 32767*"),
        ["Mode: undefined"] = (o => o.Mode = (PriorityWorkerMode)7, "*Mode must be DedicatedThreads or ThreadPool*"),
        ["TimeProvider: virtual"] = (o => o.TimeProvider = new VirtualTimeProvider(), "*cannot be a VirtualTimeProvider*"),
        ["OrdinaryWorkerPriority: Highest"] = (o => o.OrdinaryWorkerPriority = ThreadPriority.Highest, "*must be Normal, BelowNormal or Lowest*"),
        ["OrdinaryWorkerPriority: lowered on pool threads"] = (o => (o.Mode, o.OrdinaryWorkerPriority) = (PriorityWorkerMode.ThreadPool, ThreadPriority.BelowNormal), "*lowered only with Mode = DedicatedThreads*"),
    };

    public static TheoryData<string> InvalidOptions => [.. Invalid.Keys];

    [Theory]
    [MemberData(nameof(InvalidOptions))]
    public void PriorityTaskScheduler_InvalidOption_ThrowsNamingTheOption_AndSayingWhatIsWrong(string invalidCase)
    {
        var options = new PriorityTaskSchedulerOptions();
        var (breakIt, says) = Invalid[invalidCase];
        breakIt(options);

        var create = () => new PriorityTaskScheduler(options);

        create.Should().Throw<ArgumentException>().WithMessage(says).Which.ParamName.Should().Be(invalidCase.Split(':')[0]);
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

    private static readonly Dictionary<string, Action<PriorityTaskSchedulerOptions>> AtTheLimits = new()
    {
        ["one lane"] = o => o.Lanes = [new LaneOptions("Only")],
        ["MaxLaneCount lanes"] = o => o.Lanes = Enumerable.Range(0, PrioritySchedulerOptions.MaxLaneCount).Select(i => new LaneOptions($"L{i}")).ToList(),
        ["the shortest YieldQuantum"] = o => o.YieldQuantum = TimeSpan.FromTicks(1),
        ["the longest YieldQuantum"] = o => o.YieldQuantum = PrioritySchedulerOptions.MaxTimerDelay,
        ["the longest StallThreshold"] = o => o.StallThreshold = PrioritySchedulerOptions.MaxTimerDelay,
        ["a zero ShutdownTimeout"] = o => o.ShutdownTimeout = TimeSpan.Zero,
        ["the longest ShutdownTimeout"] = o => o.ShutdownTimeout = PrioritySchedulerOptions.MaxTimerDelay,
        ["an infinite ShutdownTimeout"] = o => o.ShutdownTimeout = Timeout.InfiniteTimeSpan,
        ["one worker"] = o => o.WorkerCount = 1,
        ["MaxWorkerCount workers"] = o => o.WorkerCount = PriorityTaskSchedulerOptions.MaxWorkerCount,
        ["no reserved worker"] = o => o.ReservedWorkerCount = 0,
        ["MaxWorkerCount reserved workers"] = o => o.ReservedWorkerCount = PriorityTaskSchedulerOptions.MaxWorkerCount,
        ["the least urgent lane reserved"] = o => o.ReservedLane = LanePriority.Receive,
        ["the thread-pool mode"] = o => o.Mode = PriorityWorkerMode.ThreadPool,
        ["a real clock other than the default"] = o => o.TimeProvider = TimeProvider.System,
    };

    private static readonly Dictionary<string, Action<PriorityTaskSchedulerOptions>> JustPastTheLimits = new()
    {
        ["YieldQuantum: one tick over the longest timer"] = o => o.YieldQuantum = PrioritySchedulerOptions.MaxTimerDelay + TimeSpan.FromTicks(1),
        ["YieldQuantum: negative"] = o => o.YieldQuantum = TimeSpan.FromTicks(-1),
        ["StallThreshold: zero"] = o => o.StallThreshold = TimeSpan.Zero,
        ["StallThreshold: one tick over the longest timer"] = o => o.StallThreshold = PrioritySchedulerOptions.MaxTimerDelay + TimeSpan.FromTicks(1),
        ["ShutdownTimeout: negative"] = o => o.ShutdownTimeout = TimeSpan.FromTicks(-1),
        ["ShutdownTimeout: one tick over the longest timer"] = o => o.ShutdownTimeout = PrioritySchedulerOptions.MaxTimerDelay + TimeSpan.FromTicks(1),
        ["WorkerCount: negative"] = o => o.WorkerCount = -1,
        ["WorkerCount: one over MaxWorkerCount"] = o => o.WorkerCount = PriorityTaskSchedulerOptions.MaxWorkerCount + 1,
        ["ReservedWorkerCount: negative"] = o => o.ReservedWorkerCount = -1,
        ["ReservedWorkerCount: one over MaxWorkerCount"] = o => o.ReservedWorkerCount = PriorityTaskSchedulerOptions.MaxWorkerCount + 1,
        ["ReservedLane: a lane the scheduler does not have"] = o => o.ReservedLane = LanePriority.FromRank(3),
        ["Mode: undefined"] = o => o.Mode = (PriorityWorkerMode)(-1),
    };

    public static TheoryData<string> ValuesAtTheLimits => [.. AtTheLimits.Keys];

    public static TheoryData<string> ValuesJustPastTheLimits => [.. JustPastTheLimits.Keys];

    // Validate is what both constructors call first; called directly, the limits can be checked without starting
    // 32 767 threads.
    [Theory]
    [MemberData(nameof(ValuesAtTheLimits))]
    public void Validate_AcceptsEveryValueAtTheLimitOfItsRange(string value)
    {
        var options = new PriorityTaskSchedulerOptions();
        AtTheLimits[value](options);

        options.Invoking(o => o.Validate()).Should().NotThrow(value);
    }

    [Theory]
    [MemberData(nameof(ValuesJustPastTheLimits))]
    public void Validate_RejectsAValueJustPastItsRange_NamingTheOptionAndItsRange(string invalidCase)
    {
        var options = new PriorityTaskSchedulerOptions();
        JustPastTheLimits[invalidCase](options);
        var option = invalidCase.Split(':')[0];

        var failure = options.Invoking(o => o.Validate()).Should().Throw<ArgumentOutOfRangeException>().Which;

        failure.ParamName.Should().Be(option);
        failure.Message.Should().Contain($"SchedulerOptions.{option} must");
    }

    [Fact]
    public void Defaults_AreTheDocumentedOnes()
    {
        var options = new PriorityTaskSchedulerOptions();

        options.Lanes.Select(l => l.Name).Should().Equal("Lease", "Processing", "Receive");
        options.Lanes.Should().OnlyContain(l => l.StarvationBound == null);
        options.Name.Should().BeNull();
        options.TimeProvider.Should().BeNull();
        options.YieldQuantum.Should().BeNull();
        options.StallThreshold.Should().BeNull();
        options.ShutdownTimeout.Should().Be(TimeSpan.FromSeconds(30));
        options.WorkerCount.Should().Be(Environment.ProcessorCount);
        options.Mode.Should().Be(PriorityWorkerMode.DedicatedThreads);
        options.ReservedWorkerCount.Should().Be(1);
        options.ReservedLane.Should().Be(LanePriority.Lease);
        PrioritySchedulerOptions.MaxTimerDelay.Should().Be(TimeSpan.FromMilliseconds(uint.MaxValue - 1));
    }
}
