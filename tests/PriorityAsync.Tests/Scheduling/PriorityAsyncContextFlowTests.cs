using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Scheduling;

public class PriorityAsyncContextFlowTests
{
    [Fact]
    public void Lane_FlowsThroughNestedAsyncMethods_DelaysAndTasksCompletedElsewhere()
    {
        var seen = new List<string?>();
        Bounded.Run(async () =>
        {
            await PriorityScheduler.YieldTo(LanePriority.Processing);
            seen.Add(PriorityScheduler.CurrentLane?.Name);
            await OuterAsync();
            seen.Add(PriorityScheduler.CurrentLane?.Name);
        });

        seen.Should().Equal("Processing", "Processing", "Processing", "Processing", "Processing");

        async Task OuterAsync()
        {
            await InnerAsync();
            seen.Add(PriorityScheduler.CurrentLane?.Name);
        }

        async Task InnerAsync()
        {
            await Task.Delay(1);
            seen.Add(PriorityScheduler.CurrentLane?.Name);
            await Task.Run(() => Thread.Sleep(1));
            seen.Add(PriorityScheduler.CurrentLane?.Name);
        }
    }

    [Fact]
    public void YieldTo_SwitchesLanes_AndLaterAwaitsStayInTheNewLane()
    {
        var seen = new List<string?>();
        Bounded.Run(async () =>
        {
            seen.Add(PriorityScheduler.CurrentLane?.Name);
            await PriorityScheduler.YieldTo(LanePriority.Receive);
            seen.Add(PriorityScheduler.CurrentLane?.Name);
            await Task.Yield();
            seen.Add(PriorityScheduler.CurrentLane?.Name);
            await PriorityScheduler.YieldTo(LanePriority.Lease);
            seen.Add(PriorityScheduler.CurrentLane?.Name);
        });

        seen.Should().Equal("Lease", "Receive", "Receive", "Lease");
    }

    [Fact]
    public void ConfigureAwaitFalse_LeavesTheScheduler_AndSwitchToComesBack()
    {
        var callingThread = Environment.CurrentManagedThreadId;
        string? laneAfterLeaving = "unset";
        string? laneAfterComingBack = null;
        var threadAfterComingBack = 0;

        PriorityAsyncContext.Run(async () =>
        {
            var processing = PriorityScheduler.Current!.GetLane(LanePriority.Processing);
#pragma warning disable PA0003 // the test shows that ConfigureAwait(false) leaves the scheduler
            await Task.Delay(1).ConfigureAwait(false);
#pragma warning restore PA0003
            laneAfterLeaving = PriorityScheduler.CurrentLane?.Name;
            await processing.SwitchTo();
            laneAfterComingBack = PriorityScheduler.CurrentLane?.Name;
            threadAfterComingBack = Environment.CurrentManagedThreadId;
        });

        laneAfterLeaving.Should().BeNull();
        laneAfterComingBack.Should().Be("Processing");
        threadAfterComingBack.Should().Be(callingThread);
    }

    [Fact]
    public void YieldTo_OutsideAScheduler_ThrowsSayingHowToStartOne()
    {
        var yieldOutside = () => PriorityScheduler.YieldTo(LanePriority.Lease);
        var yieldIfNeededOutside = () => PriorityScheduler.YieldIfNeeded();

        yieldOutside.Should().Throw<InvalidOperationException>().WithMessage("*PriorityAsyncContext.Run*");
        yieldIfNeededOutside.Should().Throw<InvalidOperationException>().WithMessage("*YieldIfNeeded*");
    }

    [Fact]
    public void YieldTo_ALaneTheSchedulerDoesNotHave_ThrowsArgumentOutOfRange()
    {
        var act = () => Bounded.Run(async () => await PriorityScheduler.YieldTo(LanePriority.FromRank(5)));

        act.Should().Throw<ArgumentOutOfRangeException>().WithParameterName("priority");
    }

    [Fact]
    public void AsyncVoidMethods_AreWaitedFor()
    {
        var finished = false;
        Bounded.Run(() =>
        {
            FireAndForget();
            return Task.CompletedTask;
        });

        finished.Should().BeTrue();

        async void FireAndForget()
        {
            await Task.Delay(10);
            finished = true;
        }
    }

    [Fact]
    public void Run_ReturnsTheEntryPointsResult()
    {
        var result = Bounded.Run(async () =>
        {
            await Task.Yield();
            return 42;
        });

        result.Should().Be(42);
    }

    [Fact]
    public void BlockingWaitOnATaskQueuedInTheSameLane_InlinesIt_InsteadOfDeadlocking()
    {
        var result = Bounded.Run(() =>
        {
            var lane = PriorityScheduler.CurrentLane!;
            var queued = lane.TaskFactory.StartNew(() => 21 * 2);
            return Task.FromResult(queued.Result);
        });

        result.Should().Be(42);
    }

    /// <summary>
    /// The lane's task factory hides the lane from <see cref="TaskScheduler.Current"/> in the continuations it creates
    /// as in its tasks: a <c>Task.Factory.StartNew</c> inside them goes to the thread pool, not back into the lane.
    /// </summary>
    [Fact]
    public void LaneTaskFactoryContinuations_RunInTheLane_ButHideItFromTaskSchedulerCurrent()
    {
        var (lane, hidden, nestedOnPool) = Bounded.Run(async () =>
        {
            var processing = PriorityScheduler.Current!.GetLane(LanePriority.Processing);
            return await processing.TaskFactory.ContinueWhenAll(
                [Task.CompletedTask],
#pragma warning disable PA0002, PA0004 // the test shows that a nested StartNew runs on the pool; its result is waited for in the continuation
                _ => (PriorityScheduler.CurrentLane?.Name, TaskScheduler.Current == TaskScheduler.Default, Task.Factory.StartNew(() => Thread.CurrentThread.IsThreadPoolThread).Result));
#pragma warning restore PA0002, PA0004
        });

        lane.Should().Be("Processing");
        hidden.Should().BeTrue();
        nestedOnPool.Should().BeTrue();
    }

    [Fact]
    public void Run_ReturnsWhenTheEntryPointEndsOnAnotherThread()
    {
        var endedOnPool = false;
        Bounded.OnOwnThread(
            () => PriorityAsyncContext.Run(async () =>
            {
#pragma warning disable PA0003 // the test needs the entry point to end on the thread pool
                await Task.Delay(10).ConfigureAwait(false);
#pragma warning restore PA0003
                endedOnPool = Thread.CurrentThread.IsThreadPoolThread;
            }),
            "a run whose entry point ends on the thread pool");

        endedOnPool.Should().BeTrue();
    }

    [Fact]
    public void Run_WaitsForAnAsyncVoidMethodThatEndsOnAnotherThread()
    {
        var finished = false;
        Bounded.OnOwnThread(
            () => PriorityAsyncContext.Run(() =>
            {
                FireAndForget();
                return Task.CompletedTask;
            }),
            "a run with an async void method that ends on the thread pool");

        finished.Should().BeTrue();

        async void FireAndForget()
        {
            await Task.Delay(10).ConfigureAwait(false);
            finished = true;
        }
    }

    [Fact]
    public void Run_RestoresTheCallersContext_AfterTheLoopSleptSeveralTimes()
    {
        var outer = new SynchronizationContext();
        SynchronizationContext? after = null;
        Bounded.OnOwnThread(
            () =>
            {
                SynchronizationContext.SetSynchronizationContext(outer);
                PriorityAsyncContext.Run(async () =>
                {
                    await Task.Delay(5); // nothing ready: the loop puts the thread's own context back and sleeps
                    await Task.Delay(5);
                    await Task.Delay(5);
                });
                after = SynchronizationContext.Current;
            },
            "a run that sleeps three times");

        after.Should().BeSameAs(outer);
    }

    [Fact]
    public void Dispose_FromInsideTheRun_TakesEffectWhenTheRunEnds()
    {
        var context = new PriorityAsyncContext();
        string? laneAfterDispose = null;
        context.Execute(async () =>
        {
            context.Dispose();
            await Task.Yield();
            laneAfterDispose = PriorityScheduler.CurrentLane?.Name;
        });

        laneAfterDispose.Should().Be(context.Lanes[0].Name, "the run goes on in its lane after Dispose");
        context.RejectedWorkCount.Should().Be(0);
        context.Invoking(c => c.Execute(() => Task.CompletedTask)).Should().Throw<ObjectDisposedException>().WithMessage("*has been disposed*");
        Action run = () => context.Lanes[1].Run(static () => { });
        run.Should().Throw<ObjectDisposedException>().WithMessage("*has been disposed and accepts no new work*");
    }

    [Fact]
    public async Task Dispose_FromInsideTheRun_EndsTheContextsTimerThreadWhenTheRunEnds()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        var name = $"d{Random.Shared.Next(0x1000, 0xFFFF):x}";
        var context = new PriorityAsyncContext(new PrioritySchedulerOptions { Name = name });
        context.Execute(async () =>
        {
            context.Dispose();
            await Task.Yield();
        });

        await Support.OsThreads.GoneAsync(name + " timers", "the timer thread of a context disposed during its run");
    }

    [Fact]
    public void ARun_DisposesEveryTimerItCreatedOnTheGivenClock()
    {
        var clock = new TrackingTimeProvider();
        Bounded.Run(
            async () =>
            {
                await Task.Yield();
                await PriorityScheduler.YieldTo(LanePriority.Processing);
            },
            new PrioritySchedulerOptions { TimeProvider = clock, YieldQuantum = TimeSpan.FromSeconds(10), StallThreshold = TimeSpan.FromSeconds(10) });

        clock.Created.Should().Be(2, "one quantum alarm and one stall alarm, re-armed for every slice");
        clock.Live.Should().Be(0);
    }

    [Fact]
    public void YieldTo_OutsideAScheduler_SaysHowToGetBackIntoOne()
    {
        var yieldTo = () => PriorityScheduler.YieldTo(LanePriority.Processing);

        yieldTo.Should().Throw<InvalidOperationException>().WithMessage("*PriorityScheduler.YieldTo must be called from code running in a PriorityAsync scheduler*come back with await lane.SwitchTo().");
    }
}
