using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Lifecycle;

/// <summary>
/// When a <see cref="PriorityTaskScheduler"/> counts as stopped, in both worker modes: not before the work it still
/// runs, not while it is merely idle, and once stopped, for good; and a stop leaves none of its timers behind on the
/// clock it was given.
/// </summary>
public class TaskSchedulerStopTests
{
    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads, 0)]
    [InlineData(PriorityWorkerMode.DedicatedThreads, 1)]
    [InlineData(PriorityWorkerMode.ThreadPool, 0)] // no thread at all: Complete itself finishes the scheduler
    [InlineData(PriorityWorkerMode.ThreadPool, 1)]
    public async Task AnIdleScheduler_Stops_ThenRefusesWorkAsFinished_AndAfterDisposalAsDisposed(PriorityWorkerMode mode, int reserved)
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Mode = mode, ReservedWorkerCount = reserved });
        var lane = scheduler.GetLane(LanePriority.Processing);

        scheduler.Complete();
        await Bounded.Within(scheduler.Completion, "the stop of an idle scheduler");

        Action run = () => lane.Run(static () => { });
        run.Should().ThrowExactly<InvalidOperationException>().WithMessage("*has finished*");
        scheduler.Dispose();
        run.Should().ThrowExactly<ObjectDisposedException>().WithMessage("*has been disposed and accepts no new work*");
    }

    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task AfterTheStop_CompletingOrDisposingAgain_StillRejectsLatePosts_SoTheyRunOnThePool(PriorityWorkerMode mode)
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, Mode = mode, ReservedWorkerCount = 0 });
        scheduler.Complete();
        await Bounded.Within(scheduler.Completion, "the first stop");

        scheduler.Complete();
        await scheduler.DisposeAsync();
        var ran = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        scheduler.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ => ran.TrySetResult(Thread.CurrentThread.IsThreadPoolThread), null);

        (await Bounded.Within(ran.Task, "the late post")).Should().BeTrue("work that arrives after the stop runs on the thread pool");
        scheduler.RejectedWorkCount.Should().Be(1);
        scheduler.Completion.IsCompletedSuccessfully.Should().BeTrue();
    }

    /// <summary>
    /// A posted callback is not a lane run, so the drain does not wait for it; but the scheduler is not stopped while one
    /// of its workers still runs it, even after the other workers (and the reserved one) ran out of work and exited.
    /// </summary>
    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task Completion_WaitsForTheLastRunningItem_WhileTheOtherWorkersHaveExited(PriorityWorkerMode mode)
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Mode = mode, ReservedWorkerCount = 1 });
        var lane = scheduler.GetLane(LanePriority.Processing);
        using var started = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var blockerEnded = false;
        lane.SynchronizationContext.Post(
            _ =>
            {
                started.Set();
                release.Wait(Bounded.Generous);
                Volatile.Write(ref blockerEnded, true);
            },
            null);
        Bounded.Wait(started, "the blocking callback's start");

        const int Backlog = 20;
        var ranInLane = 0;
        for (var i = 0; i < Backlog; i++)
        {
            lane.SynchronizationContext.Post(
                _ =>
                {
                    Thread.Sleep(2);
                    if (PriorityScheduler.CurrentLane == lane)
                    {
                        Interlocked.Increment(ref ranInLane);
                    }
                },
                null);
        }

        scheduler.Complete(); // nothing to drain: the scheduler closes while the backlog is still queued
        await Bounded.Within(WaitUntilAsync(() => Volatile.Read(ref ranInLane) == Backlog), "the backlog queued before the close");
        await Task.Delay(100); // the other workers look once more and exit

        scheduler.Completion.IsCompleted.Should().BeFalse("a worker still runs the blocking callback");
        release.Set();
        await Bounded.Within(scheduler.Completion, "the stop after the last item");
        Volatile.Read(ref blockerEnded).Should().BeTrue();
        scheduler.RejectedWorkCount.Should().Be(0, "everything was queued before the close and ran in the scheduler");
    }

    [Fact]
    public async Task AThreadPoolScheduler_StaysOpen_WhenItsRunnersRunOutOfWork()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Mode = PriorityWorkerMode.ThreadPool, ReservedWorkerCount = 0 });
        var lane = scheduler.GetLane(LanePriority.Processing);

        for (var round = 0; round < 3; round++)
        {
            await Bounded.Within(lane.Run(() => { }), $"item {round}");
            await Task.Delay(50); // the runner finds nothing more and returns its pool thread
            scheduler.Completion.IsCompleted.Should().BeFalse("an idle scheduler has not been stopped");
        }

        (await Bounded.Within(lane.Run(() => Task.FromResult(PriorityScheduler.CurrentLane?.Name)), "the last item")).Should().Be("Processing");
    }

    /// <summary>Two items that each wait for the other: with two workers both must run at once.</summary>
    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task TwoWorkers_RunTwoItemsQueuedTogether_AtTheSameTime(PriorityWorkerMode mode)
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Mode = mode, ReservedWorkerCount = 0 });
        var lane = scheduler.GetLane(LanePriority.Processing);
        await Task.Delay(20); // both workers idle

        for (var round = 0; round < 5; round++)
        {
            using var first = new ManualResetEventSlim();
            using var second = new ManualResetEventSlim();
            var a = lane.Run(() => Task.FromResult(Meet(first, second)));
            var b = lane.Run(() => Task.FromResult(Meet(second, first)));
            (await Bounded.Within(Task.WhenAll(a, b), $"the pair of round {round}")).Should().Equal(true, true);
            await Task.Delay(10); // idle again: the workers park or their runners return
        }

        static bool Meet(ManualResetEventSlim mine, ManualResetEventSlim other)
        {
            mine.Set();
            return other.Wait(Bounded.Generous);
        }
    }

    /// <summary>
    /// The slice alarms (yield quantum, stall watchdog) are timers on the scheduler's clock; a stopped scheduler disposes
    /// every one, in both modes, on its ordinary and its reserved workers, so a long-lived clock does not collect them.
    /// </summary>
    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task TheStop_DisposesEveryTimerTheSchedulerCreatedOnTheGivenClock(PriorityWorkerMode mode)
    {
        var clock = new TrackingTimeProvider();
        var scheduler = WithSliceAlarms(mode, reserved: 1, clock);

        await using (HeldWorkers.Hold(scheduler.GetLane(LanePriority.Processing), 2))
        {
            // Both ordinary workers are held: the lease item runs on the reserved worker.
            (await Bounded.Within(scheduler.GetLane(LanePriority.Lease).Run(() => Task.FromResult(Thread.CurrentThread.Name)), "the lease item"))
                .Should().Contain("reserved worker");
        }

        clock.Created.Should().BeGreaterThanOrEqualTo(6, "two alarms on each of the three workers that ran a slice");
        await scheduler.DisposeAsync();

        await Bounded.Within(WaitUntilAsync(() => clock.Live == 0), "the disposal of every timer");
        clock.Live.Should().Be(0);
    }

    /// <summary>
    /// Two thread-pool runners finish their last slices together as the scheduler stops: whichever finishes the
    /// scheduler, the other's worker (and its slice alarms, timers on the given clock) is disposed too, never parked
    /// for a runner that will not come. 300 stops, each leaving every timer disposed.
    /// </summary>
    [Fact]
    public async Task RunnersLeavingTogether_AsTheSchedulerStops_LeaveNoTimerBehind()
    {
        for (var trial = 0; trial < 300; trial++)
        {
            var clock = new TrackingTimeProvider();
            var scheduler = WithSliceAlarms(PriorityWorkerMode.ThreadPool, reserved: 0, clock);
            using var bothRunning = new CountdownEvent(2);
            using var release = new ManualResetEventSlim();
            var lane = scheduler.GetLane(LanePriority.Processing);
            var slices = Enumerable.Range(0, 2).Select(_ => lane.Run(() =>
            {
                bothRunning.Signal();
                release.Wait(Bounded.Generous);
            })).ToArray();
            bothRunning.Wait(Bounded.Generous).Should().BeTrue($"trial {trial}: two runners take the two slices");

            scheduler.Complete();
            release.Set(); // both runners find the queues empty and the scheduler closing at about the same moment
            await Bounded.Within(Task.WhenAll(slices), $"trial {trial}: the two slices");
            await Bounded.Within(scheduler.Completion, $"trial {trial}: the stop");
            await Bounded.Within(WaitUntilAsync(() => clock.Live == 0), $"trial {trial}: the disposal of the {clock.Created} timers of the stopped scheduler ({clock.Live} left)");
            scheduler.Dispose();
        }
    }

    /// <summary>Two ordinary workers on <paramref name="clock"/>, each with its two slice alarms (quantum and stall), timers on that clock.</summary>
    private static PriorityTaskScheduler WithSliceAlarms(PriorityWorkerMode mode, int reserved, TimeProvider clock) =>
        new(new PriorityTaskSchedulerOptions
        {
            WorkerCount = 2,
            Mode = mode,
            ReservedWorkerCount = reserved,
            TimeProvider = clock,
            YieldQuantum = TimeSpan.FromSeconds(10),
            StallThreshold = TimeSpan.FromSeconds(10),
        });

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        while (!condition())
        {
            await Task.Delay(5);
        }
    }

    [Fact]
    public async Task TheStop_WaitsForAnAsyncVoidMethodStartedInALane()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0, ShutdownTimeout = Timeout.InfiniteTimeSpan });
        var external = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var finished = false;
        using var suspended = new ManualResetEventSlim();
        scheduler.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ => FireAndForget(), null);
        Bounded.Wait(suspended, "the async void method's start"); // waited for, not slept for: it has started at any load

        scheduler.Complete();
        await Task.Delay(50);

        scheduler.Completion.IsCompleted.Should().BeFalse("an async void method started in a lane is still running");
        external.SetResult();
        await Bounded.Within(scheduler.Completion, "the stop after the async void method");
        Volatile.Read(ref finished).Should().BeTrue();

        async void FireAndForget()
        {
            var waiting = external.Task;
            suspended.Set();
            await waiting;
            Volatile.Write(ref finished, true);
        }
    }

    [Fact]
    public async Task TheStop_AfterWaitingForARun_DisposesItsShutdownTimer()
    {
        var clock = new TrackingTimeProvider();
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0, TimeProvider = clock, ShutdownTimeout = TimeSpan.FromHours(1) });
        var external = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var run = scheduler.GetLane(LanePriority.Processing).Run(async () => await external.Task);

        scheduler.Complete(); // waits for the run, bounded by a one-hour timer on the clock
        clock.Live.Should().Be(1, "the shutdown timeout's timer");
        external.SetResult();
        await Bounded.Within(run, "the run");
        await Bounded.Within(scheduler.Completion, "the stop");

        await Bounded.Within(WaitUntilAsync(() => clock.Live == 0), "the disposal of the shutdown timer");
    }

    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task DisposeAsync_ReturnsOnceTheSchedulerHasStopped_AfterTheItemsStillQueued(PriorityWorkerMode mode)
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, Mode = mode, ReservedWorkerCount = 0 });
        var lane = scheduler.GetLane(LanePriority.Processing);
        using var release = new ManualResetEventSlim();
        var ran = 0;
        lane.SynchronizationContext.Post(_ => release.Wait(Bounded.Generous), null);
        for (var i = 0; i < 5; i++)
        {
            lane.SynchronizationContext.Post(_ => Interlocked.Increment(ref ran), null);
        }

        var dispose = scheduler.DisposeAsync().AsTask();
        release.Set();
        await Bounded.Within(dispose, "DisposeAsync");

        scheduler.Completion.IsCompletedSuccessfully.Should().BeTrue("DisposeAsync waits for the stop");
        Volatile.Read(ref ran).Should().Be(5, "the items queued before the stop ran first");
    }
}
