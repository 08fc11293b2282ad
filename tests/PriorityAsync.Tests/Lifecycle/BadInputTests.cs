namespace PriorityAsync.Tests.Lifecycle;

/// <summary>Bad inputs are refused at once under their own name, not accepted to overflow later.</summary>
public class BadInputTests
{
    [Theory]
    [InlineData(int.MaxValue)]
    [InlineData(PriorityTaskSchedulerOptions.MaxWorkerCount + 1)]
    [InlineData(0)]
    public void WorkerCount_OutsideItsRange_IsRejected_NamingTheOption(int workers)
    {
        var create = () => new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = workers });

        create.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("WorkerCount");
    }

    [Fact]
    public void VirtualClock_AdvancePastTheLastRepresentableTime_Throws_EvenAfterTimeHasMoved()
    {
        var clock = new VirtualTimeProvider();
        clock.Advance(TimeSpan.FromSeconds(1));

        var advance = () => clock.Advance(TimeSpan.MaxValue);

        advance.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("delta");
        clock.Elapsed.Should().Be(TimeSpan.FromSeconds(1), "a rejected advance moves nothing");
    }

    [Fact]
    public void VirtualClock_StartingAtTheLastRepresentableTime_IsRejected()
    {
        var create = () => new VirtualTimeProvider(DateTimeOffset.MaxValue);

        create.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("start");
    }

    [Fact]
    public void VirtualClock_ATimerDueBeyondTheLastRepresentableTime_NeverFires_AndNeverBreaksTheClock()
    {
        var clock = new VirtualTimeProvider(DateTimeOffset.MaxValue - TimeSpan.FromDays(1));
        using var timer = clock.CreateTimer(_ => { }, null, TimeSpan.FromDays(2), Timeout.InfiniteTimeSpan);

        clock.NextTimerDue.Should().BeNull();
        clock.TryAdvanceToNextTimer().Should().BeFalse();
        clock.GetUtcNow().Should().Be(DateTimeOffset.MaxValue - TimeSpan.FromDays(1));
    }

    [Fact]
    public void Execute_WithAnUnknownLane_NamesTheLaneArgument()
    {
        using var context = new PriorityAsyncContext();

        var execute = () => context.Execute(LanePriority.FromRank(5), () => Task.CompletedTask);

        execute.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("lane");
    }

    [Fact]
    public async Task RunAsync_NamesItsArguments()
    {
        await using var thread = new PriorityAsyncContextThread();

        Action unknownLane = () => _ = thread.RunAsync(LanePriority.FromRank(7), () => Task.CompletedTask);
        Action noWork = () => _ = thread.RunAsync(LanePriority.Lease, (Func<Task>)null!);
        Action noTypedWork = () => _ = thread.RunAsync(LanePriority.Lease, (Func<Task<int>>)null!);

        unknownLane.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("lane");
        noWork.Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("work");
        noTypedWork.Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be("work");
    }

    [Theory]
    [InlineData("YieldQuantum")]
    [InlineData("StallThreshold")]
    [InlineData("ShutdownTimeout")]
    public void TimeOptions_LongerThanAnyTimerAccepts_AreRejected_NamingTheOption(string option)
    {
        var options = new PrioritySchedulerOptions();
        typeof(PrioritySchedulerOptions).GetProperty(option)!.SetValue(options, TimeSpan.MaxValue);

        var create = () => new PriorityAsyncContext(options);

        create.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be(option);
    }

    [Fact]
    public void ShutdownTimeout_Negative_IsRejected_ButInfiniteIsAllowed()
    {
        var negative = () => new PriorityAsyncContext(new PrioritySchedulerOptions { ShutdownTimeout = TimeSpan.FromSeconds(-1) });
        using var infinite = new PriorityAsyncContext(new PrioritySchedulerOptions { ShutdownTimeout = Timeout.InfiniteTimeSpan });

        negative.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be("ShutdownTimeout");
        infinite.ShutdownTimeout.Should().Be(Timeout.InfiniteTimeSpan);
    }

    /// <summary>Null work is rejected naming it, and is not counted as a run: the stop does not wait for it.</summary>
    [Theory]
    [InlineData("Action")]
    [InlineData("Func<Task>")]
    [InlineData("Func<Task<int>>")]
    public async Task LaneRun_WithNullWork_IsRejectedNamingIt_AndTheStopDoesNotWaitForIt(string overload)
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0, ShutdownTimeout = Timeout.InfiniteTimeSpan });
        var lane = scheduler.GetLane(LanePriority.Processing);
        Action run = overload switch
        {
            "Action" => () => lane.Run((Action)null!),
            "Func<Task>" => () => lane.Run((Func<Task>)null!),
            _ => () => lane.Run((Func<Task<int>>)null!),
        };

        run.Should().Throw<ArgumentNullException>().Which.ParamName.Should().Be(overload == "Action" ? "action" : "function");
        scheduler.Complete();
        await Bounded.Within(scheduler.Completion, "the stop (no run outstanding, an infinite shutdown timeout)");
    }
}
