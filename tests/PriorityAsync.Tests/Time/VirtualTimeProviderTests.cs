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
}
