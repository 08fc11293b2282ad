using System.Diagnostics;
using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Lifecycle;

/// <summary>What a graceful stop waits for, what it bounds, and the fate of work that arrives after it.</summary>
public class GracefulStopTests
{
    [Fact]
    public async Task Complete_WaitsForALaneRunSuspendedOnAnExternalOperation_AndItsContinuationStaysInTheLane()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
        var external = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        string? resumedIn = null;
        var work = scheduler.GetLane(LanePriority.Processing).Run(async () =>
        {
            await external.Task;
            resumedIn = PriorityScheduler.CurrentLane?.Name;
        });

        scheduler.Complete();
        await Task.Delay(50);
        scheduler.Completion.IsCompleted.Should().BeFalse("a lane run is still outstanding");
        external.SetResult(); // completes on the test thread: an outside thread, while the scheduler drains

        await work.WaitAsync(Bounded.Generous);
        await scheduler.Completion.WaitAsync(Bounded.Generous);
        resumedIn.Should().Be("Processing");
        scheduler.RejectedWorkCount.Should().Be(0);
    }

    [Fact]
    public async Task ShutdownTimeout_BoundsTheWait_ThenALateContinuationRunsOnThePool_AndIsReported()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ShutdownTimeout = TimeSpan.FromMilliseconds(100) });
        var rejected = new List<RejectedWorkEventArgs>();
        scheduler.RejectedWork += (_, e) =>
        {
            lock (rejected)
            {
                rejected.Add(e);
            }
        };
        var never = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var resumedOnPool = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var work = scheduler.GetLane(LanePriority.Lease).Run(async () =>
        {
            await never.Task;
            resumedOnPool.SetResult(Thread.CurrentThread.IsThreadPoolThread && SynchronizationContext.Current is null);
        });

        scheduler.Complete();
        await scheduler.Completion.WaitAsync(Bounded.Generous);
        work.IsCompleted.Should().BeFalse("the run is still suspended when the timeout ends the stop");

        never.SetResult();
        (await resumedOnPool.Task.WaitAsync(Bounded.Generous)).Should().BeTrue("late work runs on the thread pool, without a synchronization context");
        await work.WaitAsync(Bounded.Generous);
        scheduler.RejectedWorkCount.Should().Be(1, "the await continuation reached the lane's SynchronizationContext after the stop");
        lock (rejected)
        {
            rejected.Should().ContainSingle().Which.Should().BeEquivalentTo(new { Kind = RejectedWorkKind.Post, Lane = scheduler.GetLane(LanePriority.Lease) });
        }
    }

    [Fact]
    public async Task TimerOfTheSchedulersOwnClock_DueAfterTheStop_StillFires_AndIsCounted()
    {
        var due = TimeSpan.FromMilliseconds(300);
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var sinceArmed = Stopwatch.StartNew();
        var delay = Task.Delay(due, scheduler.TimeProvider); // created outside any lane run

        scheduler.Dispose();
        var stoppedAfter = sinceArmed.Elapsed;
        scheduler.Completion.IsCompleted.Should().BeTrue();

        await delay.WaitAsync(Bounded.Generous);

        // The firing came after the stop only if the stop ended before the due time, as measured here from before the
        // arming; on a machine so busy that the disposal took longer, the timer fired in the scheduler, uncounted.
        if (stoppedAfter < due)
        {
            scheduler.RejectedWorkCount.Should().Be(1, "the firing reached a stopped scheduler: it ran on the pool and was counted");
        }
        else
        {
            scheduler.RejectedWorkCount.Should().BeInRange(0, 1, $"the stop took {stoppedAfter.TotalMilliseconds:0} ms, past the due time");
        }
    }

    [Fact]
    public async Task PeriodicTimerOfTheSchedulersOwnClock_KeepsFiringAfterTheStop()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var fired = 0;
        using var timer = scheduler.TimeProvider.CreateTimer(_ => Interlocked.Increment(ref fired), null, TimeSpan.FromMilliseconds(20), TimeSpan.FromMilliseconds(20));

        await scheduler.DisposeAsync();
        var atStop = Volatile.Read(ref fired);
        var deadline = DateTime.UtcNow + Bounded.Generous;
        while (Volatile.Read(ref fired) < atStop + 3 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(10);
        }

        Volatile.Read(ref fired).Should().BeGreaterThanOrEqualTo(atStop + 3);
    }

    [Fact]
    public async Task DisposeAsync_FromInsideALane_OnlySignals_AndTheCallerResumesInItsLane()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });

        var lane = await scheduler.GetLane(LanePriority.Processing).Run(async () =>
        {
            await scheduler.DisposeAsync();
            await Task.Yield();
            return PriorityScheduler.CurrentLane?.Name;
        }).WaitAsync(Bounded.Generous);

        await scheduler.Completion.WaitAsync(Bounded.Generous);
        lane.Should().Be("Processing");
    }

    [Fact]
    public async Task ContextThreadJoin_WaitsForWorkStartedWithRunAsync()
    {
        var clock = new VirtualTimeProvider();
        var thread = new PriorityAsyncContextThread(new PrioritySchedulerOptions { TimeProvider = clock, ShutdownTimeout = TimeSpan.FromHours(1) });
        var work = thread.RunAsync(LanePriority.Processing, async () =>
        {
            await Task.Delay(TimeSpan.FromMinutes(10), thread.Context.TimeProvider);
            return PriorityScheduler.CurrentLane!.Name;
        });

        await thread.JoinAsync().WaitAsync(Bounded.Generous);

        work.IsCompletedSuccessfully.Should().BeTrue("the join waited for the run");
        (await work).Should().Be("Processing");
        clock.Elapsed.Should().Be(TimeSpan.FromMinutes(10), "on virtual time the drain jumps straight to the run's timer");
        thread.Context.RejectedWorkCount.Should().Be(0);
        await thread.DisposeAsync();
    }

    [Fact]
    public async Task ContextThread_ExceptionOfAPostedCallback_DoesNotStrandTheWorkQueuedBehindIt()
    {
        var thread = new PriorityAsyncContextThread();
        using var gate = new ManualResetEventSlim();
        var lane = thread.Context.GetLane(LanePriority.Processing);
        _ = thread.RunAsync(LanePriority.Lease, () =>
        {
            gate.Wait(Bounded.Generous); // holds the thread while the failing post and the work behind it are queued
            return Task.CompletedTask;
        });
        lane.SynchronizationContext.Post(_ => throw new TimeoutException("posted"), null);
        var behind = Enumerable.Range(0, 5).Select(i => thread.RunAsync(LanePriority.Processing, () => Task.FromResult(i))).ToArray();
        gate.Set();

        var results = await Task.WhenAll(behind).WaitAsync(Bounded.Generous);

        results.Should().Equal(0, 1, 2, 3, 4);
        var completion = async () => await thread.Completion.WaitAsync(Bounded.Generous);
        await completion.Should().ThrowAsync<TimeoutException>().WithMessage("posted");
        await thread.DisposeAsync();
    }

    [Fact]
    public void Context_ExceptionOfAPostedCallback_RunsTheQueuedItemsBeforeItIsRethrown()
    {
        using var context = new PriorityAsyncContext();
        var ran = new List<int>();

        var execute = () => context.Execute(() =>
        {
            var lane = context.GetLane(LanePriority.Processing).SynchronizationContext;
            lane.Post(_ => throw new TimeoutException("posted"), null);
#pragma warning disable PA0001 // three posts, no CPU work to split
            for (var i = 0; i < 3; i++)
            {
                var n = i;
                lane.Post(_ => ran.Add(n), null);
            }
#pragma warning restore PA0001

            return Task.CompletedTask;
        });

        execute.Should().Throw<TimeoutException>().WithMessage("posted");
        ran.Should().Equal(0, 1, 2);
    }

    [Fact]
    public async Task RunAfterDispose_ThrowsObjectDisposedException_Unwrapped()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        await scheduler.DisposeAsync();
        var thread = new PriorityAsyncContextThread();
        await thread.DisposeAsync();

        Action run = () => _ = scheduler.GetLane(LanePriority.Lease).Run(() => Task.CompletedTask);
        Action runAsync = () => _ = thread.RunAsync(LanePriority.Lease, () => Task.CompletedTask);

        run.Should().ThrowExactly<ObjectDisposedException>();
        runAsync.Should().ThrowExactly<ObjectDisposedException>();
    }

    [Fact]
    public async Task StartNewWithoutAScheduler_RunsOnThePool_BeforeAndAfterTheFirstAwait()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });

        var (before, after, ambient) = await scheduler.GetLane(LanePriority.Processing).Run(async () =>
        {
#pragma warning disable PA0004 // the test shows that StartNew without a scheduler runs on the pool
            var first = await Task.Factory.StartNew(() => Thread.CurrentThread.IsThreadPoolThread);
            await Task.Yield();
            var second = await Task.Factory.StartNew(() => Thread.CurrentThread.IsThreadPoolThread);
#pragma warning restore PA0004
            return (first, second, TaskScheduler.Current);
        }).WaitAsync(Bounded.Generous);

        before.Should().BeTrue();
        after.Should().BeTrue();
        ambient.Should().BeSameAs(TaskScheduler.Default, "a lane never shows up as TaskScheduler.Current");
    }

    [Fact]
    public async Task WhileDraining_WorkInFlightMayStillStartNewLaneRuns_AndTheStopWaitsForThem()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0 });
        using var completeCalled = new ManualResetEventSlim();
        var inner = new TaskCompletionSource<Task<string>>(TaskCreationOptions.RunContinuationsAsynchronously);
        var outer = scheduler.GetLane(LanePriority.Processing).Run(async () =>
        {
            completeCalled.Wait(Bounded.Generous);
            var started = scheduler.GetLane(LanePriority.Receive).Run(async () =>
            {
                await Task.Delay(20);
                return PriorityScheduler.CurrentLane!.Name;
            });
            inner.SetResult(started);
            await Task.Yield();
        });

        scheduler.Complete();
        completeCalled.Set();
        var started = await inner.Task.WaitAsync(Bounded.Generous);
        await scheduler.Completion.WaitAsync(Bounded.Generous);

        started.IsCompletedSuccessfully.Should().BeTrue("the stop waited for the run started from inside while it drained");
        (await started).Should().Be("Receive");
        outer.IsCompletedSuccessfully.Should().BeTrue();
        scheduler.RejectedWorkCount.Should().Be(0);
    }

    [Fact]
    public async Task ZeroShutdownTimeout_StopsAtOnce_WithoutWaitingForSuspendedRuns()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ShutdownTimeout = TimeSpan.Zero });
        var never = new TaskCompletionSource();
        var suspended = scheduler.GetLane(LanePriority.Processing).Run(async () => await never.Task);

        scheduler.Complete();
        scheduler.Complete();
        await scheduler.Completion.WaitAsync(Bounded.Generous);

        suspended.IsCompleted.Should().BeFalse();
        never.SetResult();
        await suspended.WaitAsync(Bounded.Generous);
        scheduler.RejectedWorkCount.Should().Be(1);
    }
}
