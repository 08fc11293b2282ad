using System.Collections.Concurrent;
using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Lifecycle;

/// <summary>
/// Work that reaches a lane after its scheduler stopped: each kind is reported as what it is, still runs (on the
/// thread pool), and neither a throwing handler nor throwing work breaks anything.
/// </summary>
public class RejectedWorkTests
{
    [Fact]
    public void EveryKindOfLateWork_IsReportedWithItsKindAndLane_AndStillRuns()
    {
        var clock = new VirtualTimeProvider();
        using var context = new PriorityAsyncContext(new PrioritySchedulerOptions { TimeProvider = clock });
        var reports = new ConcurrentQueue<(RejectedWorkKind Kind, string Lane, bool OnPool)>();
        context.RejectedWork += (_, e) => reports.Enqueue((e.Kind, e.Lane.Name, Thread.CurrentThread.IsThreadPoolThread));
        var ran = new ConcurrentQueue<string>();
        ITimer? timer = null;
        context.Execute(() =>
        {
            timer = context.TimeProvider.CreateTimer(_ => Ran("timer"), null, TimeSpan.FromSeconds(1), Timeout.InfiniteTimeSpan);
            return Task.CompletedTask;
        });

        context.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ => Ran("post"), null);
        WaitFor("post");
        context.GetLane(LanePriority.Receive).SwitchTo().GetAwaiter().UnsafeOnCompleted(() => Ran("continuation"));
        WaitFor("continuation");
        var task = context.GetLane(LanePriority.Lease).TaskFactory.StartNew(() => Ran("task"));
        WaitFor("task");
        clock.Advance(TimeSpan.FromSeconds(1));
        WaitFor("timer");

        task.IsCompletedSuccessfully.Should().BeTrue();
        ran.Should().Equal("post", "continuation", "task", "timer");
        reports.Should().Equal(
            (RejectedWorkKind.Post, "Processing", true),
            (RejectedWorkKind.Continuation, "Receive", true),
            (RejectedWorkKind.Task, "Lease", true),
            (RejectedWorkKind.TimerCallback, "Lease", true));
        context.RejectedWorkCount.Should().Be(4);
        timer!.Dispose();

        void Ran(string what) => ran.Enqueue(what);

        // One at a time, so the order of the reports is the order of the work.
        void WaitFor(string what)
        {
            var deadline = DateTime.UtcNow + Bounded.Generous;
            while (!ran.Contains(what))
            {
                DateTime.UtcNow.Should().BeBefore(deadline, $"the late {what} runs on the thread pool");
                Thread.Sleep(1);
            }
        }
    }

    [Fact]
    public void AHandlerThatThrows_NeitherStopsTheWork_NorReachesTheCaller()
    {
        using var context = new PriorityAsyncContext();
        context.RejectedWork += (_, _) => throw new InvalidOperationException("a careless RejectedWork handler");
        context.UnhandledException += (_, _) => throw new InvalidOperationException("a careless UnhandledException handler");
        context.Execute(() => Task.CompletedTask);
        using var ran = new ManualResetEventSlim();
        using var failedWorkDone = new ManualResetEventSlim();

        context.GetLane(LanePriority.Lease).SynchronizationContext.Post(_ => ran.Set(), null);
        context.GetLane(LanePriority.Lease).SynchronizationContext.Post(
            _ =>
            {
                failedWorkDone.Set();
                throw new FormatException("late work that throws");
            },
            null);

        Bounded.Wait(ran, "late work whose RejectedWork handler throws");
        Bounded.Wait(failedWorkDone, "late work that throws");
        context.RejectedWorkCount.Should().Be(2);
    }

    [Fact]
    public async Task LateWorkThatThrows_RaisesUnhandledException_NamingItsLane()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0 });
        await scheduler.DisposeAsync();
        var reported = new TaskCompletionSource<SchedulerExceptionEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        scheduler.UnhandledException += (_, e) => reported.TrySetResult(e);

        scheduler.GetLane(LanePriority.Receive).SynchronizationContext.Post(_ => throw new FormatException("late"), null);

        var report = await Bounded.Within(reported.Task, "the report of late work that threw");
        report.Lane.Name.Should().Be("Receive");
        report.Exception.Should().BeOfType<FormatException>().Which.Message.Should().Be("late");
        scheduler.Completion.IsCompletedSuccessfully.Should().BeTrue("late work does not fault a scheduler that has already stopped");
    }
}
