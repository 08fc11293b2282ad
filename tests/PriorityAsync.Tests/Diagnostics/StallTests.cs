using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Diagnostics;

/// <summary>The stall watchdog on virtual time: what it reports, when, and what a throwing handler does.</summary>
public class StallTests
{
    [Fact]
    public void ALongSlice_IsReportedWhileItRuns_AtTheThreshold_ThenWhenItEnds_WithItsFullLength()
    {
        var clock = new VirtualTimeProvider();
        var events = new List<string>();
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { TimeProvider = clock, StallThreshold = TimeSpan.FromMilliseconds(100) });
        context.StallInProgress += (_, e) => events.Add($"in progress: {e.Lane.Name} {e.Duration.TotalMilliseconds} ms");
        context.StallDetected += (_, e) => events.Add($"detected: {e.Lane.Name} {e.Duration.TotalMilliseconds} ms");

        context.Execute(async () =>
        {
            await context.GetLane(LanePriority.Receive).Run(() =>
            {
                clock.Advance(TimeSpan.FromMilliseconds(60));
                events.Add("slice at 60 ms");
                clock.Advance(TimeSpan.FromMilliseconds(190));
            });
            await context.GetLane(LanePriority.Processing).Run(() => clock.Advance(TimeSpan.FromMilliseconds(100)));
            await context.GetLane(LanePriority.Processing).Run(() => clock.Advance(TimeSpan.FromMilliseconds(99)));
        });

        events.Should().Equal(
            "slice at 60 ms",
            "in progress: Receive 100 ms",
            "detected: Receive 250 ms",
            "in progress: Processing 100 ms",
            "detected: Processing 100 ms");
    }

    [Fact]
    public void AThrowingStallInProgressHandler_IsIgnored()
    {
        var clock = new VirtualTimeProvider();
        var detected = new List<TimeSpan>();
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { TimeProvider = clock, StallThreshold = TimeSpan.FromMilliseconds(100) });
        context.StallInProgress += (_, _) => throw new InvalidOperationException("a careless watchdog handler");
        context.StallDetected += (_, e) => detected.Add(e.Duration);

        var result = context.Execute(async () =>
        {
            await context.GetLane(LanePriority.Processing).Run(() => clock.Advance(TimeSpan.FromMilliseconds(300)));
            return "finished";
        });

        result.Should().Be("finished");
        detected.Should().Equal(TimeSpan.FromMilliseconds(300));
    }

    [Fact]
    public void AThrowingStallDetectedHandler_EndsTheContextsRun_LikeAnyCallbackException()
    {
        var clock = new VirtualTimeProvider();
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { TimeProvider = clock, StallThreshold = TimeSpan.FromMilliseconds(100) });
        context.StallDetected += (_, _) => throw new InvalidOperationException("stall handler failed");

        var execute = () => Bounded.OnOwnThread(
            () => context.Execute(async () =>
            {
                await context.GetLane(LanePriority.Processing).Run(() => clock.Advance(TimeSpan.FromMilliseconds(150)));
                await Task.Delay(Timeout.InfiniteTimeSpan, context.TimeProvider);
            }),
            "a run whose stall handler throws");

        execute.Should().Throw<InvalidOperationException>().WithMessage("stall handler failed");
    }

    [Fact]
    public async Task AThrowingStallDetectedHandler_OnTheTaskScheduler_IsReported_AndTheWorkersGoOn()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0, StallThreshold = TimeSpan.FromMilliseconds(20) });
        var reported = new TaskCompletionSource<SchedulerExceptionEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        scheduler.UnhandledException += (_, e) => reported.TrySetResult(e);
        scheduler.StallDetected += (_, _) => throw new InvalidOperationException("stall handler failed");

#pragma warning disable PA0002 // the test needs a slice that holds the thread (60 ms) to raise a stall
        await Bounded.Within(scheduler.GetLane(LanePriority.Processing).Run(() => Thread.Sleep(60)), "a 60 ms slice");
#pragma warning restore PA0002
        var report = await Bounded.Within(reported.Task, "the report of the handler's exception");
        var after = await Bounded.Within(scheduler.GetLane(LanePriority.Processing).Run(() => Task.FromResult(3)), "work after the failed handler");

        report.Lane.Name.Should().Be("Processing");
        report.Exception.Message.Should().Be("stall handler failed");
        after.Should().Be(3);
        scheduler.Complete();
        var completion = async () => await Bounded.Within(scheduler.Completion, "the scheduler's stop");
        await completion.Should().ThrowAsync<InvalidOperationException>().WithMessage("stall handler failed");
    }
}
