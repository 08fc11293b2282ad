namespace PriorityAsync.Tests.Time;

public class VirtualTimeProviderTests
{
    [Fact]
    public void Advance_FiresTimersInDueOrder_AndEqualDueTimesInArmingOrder()
    {
        var clock = new VirtualTimeProvider();
        var fired = new List<(string Name, TimeSpan At)>();
        using var late = clock.CreateTimer(_ => fired.Add(("late", clock.Elapsed)), null, TimeSpan.FromSeconds(3), Timeout.InfiniteTimeSpan);
        using var first = clock.CreateTimer(_ => fired.Add(("first", clock.Elapsed)), null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);
        using var second = clock.CreateTimer(_ => fired.Add(("second", clock.Elapsed)), null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);

        clock.Advance(TimeSpan.FromSeconds(2));

        fired.Should().Equal(("first", TimeSpan.FromSeconds(1)), ("second", TimeSpan.FromSeconds(1)));
        clock.Elapsed.Should().Be(TimeSpan.FromSeconds(2));
        clock.ActiveTimerCount.Should().Be(1);
    }

    [Fact]
    public void PeriodicTimer_FiresOncePerPeriod()
    {
        var clock = new VirtualTimeProvider();
        var ticks = new List<TimeSpan>();
        using var timer = clock.CreateTimer(_ => ticks.Add(clock.Elapsed), null, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(2));

        clock.Advance(TimeSpan.FromSeconds(6));

        ticks.Should().Equal(TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(3), TimeSpan.FromSeconds(5));
    }

    [Fact]
    public void ChangeAndDispose_DisarmTheTimer()
    {
        var clock = new VirtualTimeProvider();
        var count = 0;
        var timer = clock.CreateTimer(_ => count++, null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);
        timer.Change(TimeSpan.FromSeconds(5), Timeout.InfiniteTimeSpan).Should().BeTrue();
        clock.Advance(TimeSpan.FromSeconds(2));
        count.Should().Be(0);

        timer.Dispose();
        clock.Advance(TimeSpan.FromSeconds(10));

        count.Should().Be(0);
        timer.Change(TimeSpan.Zero, Timeout.InfiniteTimeSpan).Should().BeFalse();
        clock.NextTimerDue.Should().BeNull();
    }

    [Fact]
    public void TryAdvanceToNextTimer_JumpsToTheEarliestDueTime()
    {
        var start = new DateTimeOffset(2024, 5, 1, 12, 0, 0, TimeSpan.Zero);
        var clock = new VirtualTimeProvider(start);
        clock.TryAdvanceToNextTimer().Should().BeFalse();
        var fired = false;
        using var timer = clock.CreateTimer(_ => fired = true, null, TimeSpan.FromMinutes(35), Timeout.InfiniteTimeSpan);

        clock.NextTimerDue.Should().Be(start.AddMinutes(35));
        clock.TryAdvanceToNextTimer().Should().BeTrue();

        fired.Should().BeTrue();
        clock.GetUtcNow().Should().Be(start.AddMinutes(35));
    }

    [Fact]
    public async Task TaskDelay_OnTheVirtualClock_CompletesWhenAdvanced()
    {
        var clock = new VirtualTimeProvider();
        var delay = Task.Delay(TimeSpan.FromHours(1), clock);
        delay.IsCompleted.Should().BeFalse();

        clock.Advance(TimeSpan.FromHours(1));

        await delay;
        clock.GetElapsedTime(0).Should().Be(TimeSpan.FromHours(1));
    }

    [Fact]
    public void InvalidArguments_ThrowNamingTheArgument()
    {
        var clock = new VirtualTimeProvider();
        clock.Advance(TimeSpan.FromSeconds(10));

        clock.Invoking(c => c.Advance(TimeSpan.FromTicks(-1))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("delta");
        clock.Invoking(c => c.AdvanceTo(c.GetUtcNow().AddSeconds(-1))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("time");
        clock.Invoking(c => c.CreateTimer(null!, null, TimeSpan.Zero, TimeSpan.Zero)).Should().Throw<ArgumentNullException>().WithParameterName("callback");
        clock.Invoking(c => c.CreateTimer(_ => { }, null, TimeSpan.FromSeconds(-2), TimeSpan.Zero)).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("dueTime");
    }

    [Fact]
    public void Clock_IsUtc_CountsTicks_AndStartsWhereItWasTold()
    {
        var start = new DateTimeOffset(2024, 3, 1, 14, 0, 0, TimeSpan.FromHours(2));
        var clock = new VirtualTimeProvider(start);
        clock.Advance(TimeSpan.FromMilliseconds(1500));

        clock.GetUtcNow().Should().Be(start.AddMilliseconds(1500));
        clock.GetUtcNow().Offset.Should().Be(TimeSpan.Zero);
        clock.LocalTimeZone.Should().Be(TimeZoneInfo.Utc);
        clock.TimestampFrequency.Should().Be(TimeSpan.TicksPerSecond);
        clock.GetTimestamp().Should().Be(TimeSpan.FromMilliseconds(1500).Ticks);
        clock.Elapsed.Should().Be(TimeSpan.FromMilliseconds(1500));
        new VirtualTimeProvider().GetUtcNow().Should().Be(new DateTimeOffset(2000, 1, 1, 0, 0, 0, TimeSpan.Zero));
    }

    [Fact]
    public void AdvanceTo_FiresEachTimerAtItsOwnDueTime_AndAcceptsTheCurrentTime()
    {
        var clock = new VirtualTimeProvider();
        var start = clock.GetUtcNow();
        var fired = new List<(string Name, DateTimeOffset At)>();
        using var a = clock.CreateTimer(_ => fired.Add(("a", clock.GetUtcNow())), null, TimeSpan.FromSeconds(2), Timeout.InfiniteTimeSpan);
        using var b = clock.CreateTimer(_ => fired.Add(("b", clock.GetUtcNow())), null, TimeSpan.FromSeconds(5), Timeout.InfiniteTimeSpan);
        using var c = clock.CreateTimer(_ => fired.Add(("c", clock.GetUtcNow())), null, TimeSpan.FromSeconds(9), Timeout.InfiniteTimeSpan);

        clock.AdvanceTo(start.AddSeconds(5));
        clock.AdvanceTo(start.AddSeconds(5));

        fired.Should().Equal(("a", start.AddSeconds(2)), ("b", start.AddSeconds(5)));
        clock.GetUtcNow().Should().Be(start.AddSeconds(5));
        clock.ActiveTimerCount.Should().Be(1);
        clock.NextTimerDue.Should().Be(start.AddSeconds(9));
    }

    [Fact]
    public void AdvanceByZero_FiresTheTimersAlreadyDue_AndOnlyThose()
    {
        var clock = new VirtualTimeProvider();
        var fired = new List<string>();
        using var now = clock.CreateTimer(_ => fired.Add("now"), null, TimeSpan.Zero, Timeout.InfiniteTimeSpan);
        using var later = clock.CreateTimer(_ => fired.Add("later"), null, TimeSpan.FromTicks(1), Timeout.InfiniteTimeSpan);

        clock.Advance(TimeSpan.Zero);

        fired.Should().Equal("now");
        clock.Elapsed.Should().Be(TimeSpan.Zero);
    }

    [Fact]
    public void TryAdvanceToNextTimer_FiresEveryTimerOfThatInstant_ButNoLaterOne()
    {
        var clock = new VirtualTimeProvider();
        var fired = new List<string>();
        using var first = clock.CreateTimer(_ => fired.Add("first"), null, TimeSpan.FromSeconds(3), Timeout.InfiniteTimeSpan);
        using var second = clock.CreateTimer(_ => fired.Add("second"), null, TimeSpan.FromSeconds(3), Timeout.InfiniteTimeSpan);
        using var later = clock.CreateTimer(_ => fired.Add("later"), null, TimeSpan.FromSeconds(3) + TimeSpan.FromTicks(1), Timeout.InfiniteTimeSpan);

        clock.TryAdvanceToNextTimer().Should().BeTrue();

        fired.Should().Equal("first", "second");
        clock.Elapsed.Should().Be(TimeSpan.FromSeconds(3));
    }

    [Fact]
    public void ATimerArmedByACallback_FiresInTheSameAdvance_WhenItFallsDueOnTheWay()
    {
        var clock = new VirtualTimeProvider();
        var fired = new List<TimeSpan>();
        ITimer? chained = null;
        using var first = clock.CreateTimer(
            _ =>
            {
                fired.Add(clock.Elapsed);
                chained = clock.CreateTimer(_ => fired.Add(clock.Elapsed), null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);
            },
            null,
            TimeSpan.FromSeconds(1),
            Timeout.InfiniteTimeSpan);

        clock.Advance(TimeSpan.FromSeconds(5));

        fired.Should().Equal(TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(2));
        clock.Elapsed.Should().Be(TimeSpan.FromSeconds(5));
        chained!.Dispose();
    }

    [Fact]
    public void Change_ReplacesTheDueTime_AndAZeroPeriodFiresOnce()
    {
        var clock = new VirtualTimeProvider();
        var fired = new List<TimeSpan>();
        using var timer = clock.CreateTimer(_ => fired.Add(clock.Elapsed), null, TimeSpan.FromSeconds(10), TimeSpan.FromSeconds(1));

        timer.Change(TimeSpan.FromSeconds(2), TimeSpan.Zero).Should().BeTrue();

        clock.ActiveTimerCount.Should().Be(1, "the earlier arming no longer counts");
        clock.Advance(TimeSpan.FromSeconds(20));
        fired.Should().Equal(TimeSpan.FromSeconds(2));
        clock.ActiveTimerCount.Should().Be(0);

        timer.Change(Timeout.InfiniteTimeSpan, TimeSpan.FromSeconds(1)).Should().BeTrue();
        clock.Advance(TimeSpan.FromSeconds(20));
        fired.Should().HaveCount(1, "an infinite due time disarms the timer whatever the period");
        clock.Invoking(_ => timer.Change(TimeSpan.Zero, TimeSpan.FromSeconds(-3))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("period");
    }

    [Fact]
    public void PeriodicTimer_NearTheEndOfTime_FiresWhileItCan_ThenStops()
    {
        var clock = new VirtualTimeProvider(DateTimeOffset.MaxValue - TimeSpan.FromDays(3));
        var fired = new List<TimeSpan>();
        using var timer = clock.CreateTimer(_ => fired.Add(clock.Elapsed), null, TimeSpan.FromDays(1), TimeSpan.FromDays(2));

        while (clock.TryAdvanceToNextTimer())
        {
        }

        fired.Should().Equal(TimeSpan.FromDays(1), TimeSpan.FromDays(3));
        clock.ActiveTimerCount.Should().Be(0);
        clock.GetUtcNow().Should().Be(DateTimeOffset.MaxValue);
    }

    [Fact]
    public void NearTheEndOfTime_TheClockMovesExactlyToTheLastInstant_AndNoFurther()
    {
        var clock = new VirtualTimeProvider(DateTimeOffset.MaxValue - TimeSpan.FromDays(2));
        clock.Advance(TimeSpan.FromDays(1));

        var oneTickTooFar = () => clock.Advance(TimeSpan.FromDays(1) + TimeSpan.FromTicks(1));

        oneTickTooFar.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("delta").WithMessage("*would move it past DateTimeOffset.MaxValue*");
        clock.Elapsed.Should().Be(TimeSpan.FromDays(1), "a rejected advance moves nothing");
        clock.Advance(TimeSpan.FromDays(1));
        clock.GetUtcNow().Should().Be(DateTimeOffset.MaxValue);
    }

    [Fact]
    public void ATimerDueFurtherThanTimeGoes_NeverFires_EvenOnceTheClockHasMoved()
    {
        var clock = new VirtualTimeProvider();
        clock.Advance(TimeSpan.FromSeconds(1));
        var fired = false;

        using var timer = clock.CreateTimer(_ => fired = true, null, TimeSpan.MaxValue, Timeout.InfiniteTimeSpan);
        clock.Advance(TimeSpan.FromDays(1));

        fired.Should().BeFalse();
        clock.NextTimerDue.Should().BeNull();
        clock.ActiveTimerCount.Should().Be(0);
    }

    [Fact]
    public async Task DisposeAsync_DisarmsTheTimer()
    {
        var clock = new VirtualTimeProvider();
        var fired = false;
        var timer = clock.CreateTimer(_ => fired = true, null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);

        await timer.DisposeAsync();
        clock.Advance(TimeSpan.FromSeconds(2));

        fired.Should().BeFalse();
        clock.ActiveTimerCount.Should().Be(0);
    }

    [Fact]
    public void RejectedArguments_SayWhatIsAllowed()
    {
        var clock = new VirtualTimeProvider();

        clock.Invoking(c => c.CreateTimer(_ => { }, null, TimeSpan.FromSeconds(-1), Timeout.InfiniteTimeSpan)).Should().Throw<ArgumentOutOfRangeException>()
            .WithMessage("The time must be zero or positive, or Timeout.InfiniteTimeSpan.*");
        clock.Invoking(c => c.AdvanceTo(c.GetUtcNow().AddTicks(-1))).Should().Throw<ArgumentOutOfRangeException>()
            .WithMessage("A virtual clock cannot move backwards*");
        FluentActions.Invoking(() => new VirtualTimeProvider(DateTimeOffset.MaxValue)).Should().Throw<ArgumentOutOfRangeException>()
            .WithMessage("A virtual clock must start earlier than DateTimeOffset.MaxValue*");
    }
}
