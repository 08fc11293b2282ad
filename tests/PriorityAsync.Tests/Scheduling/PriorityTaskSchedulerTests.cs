using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Scheduling;

public class PriorityTaskSchedulerTests
{
    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads, 0)]
    [InlineData(PriorityWorkerMode.ThreadPool, 0)]
    [InlineData(PriorityWorkerMode.DedicatedThreads, 1)]
    [InlineData(PriorityWorkerMode.ThreadPool, 1)]
    public async Task NeverRunsMoreThanWorkerCountItemsAtOnce_PlusTheReservedWorkersForLeaseWork(PriorityWorkerMode mode, int reserved)
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Mode = mode, ReservedWorkerCount = reserved });
        var running = 0;
        var maxRunning = 0;
        var runningOrdinary = 0;
        var maxRunningOrdinary = 0;

        var tasks = Enumerable.Range(0, 60).Select(i => scheduler.GetLane(LanePriority.FromRank(i % 3)).Run(() =>
        {
            var ordinary = i % 3 != 0;
            InterlockedMax(ref maxRunning, Interlocked.Increment(ref running));
            if (ordinary)
            {
                InterlockedMax(ref maxRunningOrdinary, Interlocked.Increment(ref runningOrdinary));
            }

            Thread.SpinWait(20_000);
            if (ordinary)
            {
                Interlocked.Decrement(ref runningOrdinary);
            }

            Interlocked.Decrement(ref running);
        }));
        await Task.WhenAll(tasks).WaitAsync(Bounded.Generous);

        maxRunning.Should().BeInRange(1, 2 + reserved);
        maxRunningOrdinary.Should().BeInRange(1, 2, "the reserved workers run only the lease lane");
    }

    [Fact]
    public async Task OneWorker_RunsMostUrgentLaneFirst_AndFifoWithinALane()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0 });
        using var gate = new ManualResetEventSlim();
        var order = new List<string>();
        var blocker = scheduler.GetLane(LanePriority.Receive).Run(() => gate.Wait(Bounded.Generous));
        await WaitUntilAsync(() => scheduler.GetLane(LanePriority.Receive).QueueLength == 0);

        var tasks = new[]
        {
            Run(LanePriority.Receive, "receive-1"),
            Run(LanePriority.Processing, "processing-1"),
            Run(LanePriority.Lease, "lease-1"),
            Run(LanePriority.Processing, "processing-2"),
            Run(LanePriority.Lease, "lease-2"),
        };
        gate.Set();
        await Task.WhenAll(tasks.Append(blocker)).WaitAsync(Bounded.Generous);

        order.Should().Equal("lease-1", "lease-2", "processing-1", "processing-2", "receive-1");

        Task Run(LanePriority lane, string name) => scheduler.GetLane(lane).Run(() => order.Add(name));
    }

    [Fact]
    public async Task Lane_FlowsAcrossAwaits_OnWorkerThreads()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Name = "flow" });
        var lanes = await scheduler.GetLane(LanePriority.Processing).Run(async () =>
        {
            var seen = new List<string?> { PriorityScheduler.CurrentLane?.Name };
            await Task.Delay(5);
            seen.Add(PriorityScheduler.CurrentLane?.Name);
            await Task.Delay(TimeSpan.FromMilliseconds(5), PriorityScheduler.Current!.TimeProvider);
            seen.Add(PriorityScheduler.CurrentLane?.Name);
            await PriorityScheduler.YieldTo(LanePriority.Lease);
            seen.Add(PriorityScheduler.CurrentLane?.Name);
            seen.Add(Thread.CurrentThread.Name);
            return seen;
        }).WaitAsync(Bounded.Generous);

        lanes.Should().Equal("Processing", "Processing", "Processing", "Lease", lanes[^1]);
        lanes[^1].Should().StartWith("flow worker");
    }

    [Fact]
    public async Task PostedCallbackException_RaisesTheEvent_KeepsRunning_AndFaultsCompletion()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
        var reported = new TaskCompletionSource<SchedulerExceptionEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        scheduler.UnhandledException += (_, e) => reported.TrySetResult(e);

        scheduler.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ => throw new InsufficientExecutionStackException("boom"), null);
        var report = await reported.Task.WaitAsync(Bounded.Generous);
        var stillRuns = await scheduler.GetLane(LanePriority.Lease).Run(() => Task.FromResult(7)).WaitAsync(Bounded.Generous);
        scheduler.Complete();
        var completion = async () => await scheduler.Completion.WaitAsync(Bounded.Generous);

        report.Lane.Name.Should().Be("Processing");
        report.Exception.Should().BeOfType<InsufficientExecutionStackException>();
        stillRuns.Should().Be(7);
        await completion.Should().ThrowAsync<InsufficientExecutionStackException>();
    }

    [Fact]
    public async Task Complete_LetsWorkInFlightFinish_ButRejectsWorkFromOutside()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Name = "draining" });
        using var started = new ManualResetEventSlim();
        using var proceed = new ManualResetEventSlim();
        var steps = new List<string>();
        var work = scheduler.GetLane(LanePriority.Processing).Run(async () =>
        {
            started.Set();
            proceed.Wait(Bounded.Generous);
            await PriorityScheduler.YieldTo(LanePriority.Lease);
            lock (steps)
            {
                steps.Add("continuation ran after Complete");
            }
        });
        started.Wait(Bounded.Generous);

        scheduler.Complete();
        Action outside = () => _ = scheduler.GetLane(LanePriority.Lease).Run(() => { });
        outside.Should().Throw<InvalidOperationException>().WithMessage("*draining*shutting down*");
        proceed.Set();
        await work.WaitAsync(Bounded.Generous);
        await scheduler.Completion.WaitAsync(Bounded.Generous);

        steps.Should().Equal("continuation ran after Complete");
    }

    [Fact]
    public async Task Dispose_FromInsideALane_DoesNotDeadlock()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });

        await scheduler.GetLane(LanePriority.Lease).Run(scheduler.Dispose).WaitAsync(Bounded.Generous);
        await scheduler.Completion.WaitAsync(Bounded.Generous);

        Action run = () => _ = scheduler.GetLane(LanePriority.Lease).Run(() => { });
        run.Should().Throw<ObjectDisposedException>().WithMessage($"*{scheduler.Name}*");
    }

    [Fact]
    public void Dispose_FromOutside_WaitsForTheWorkers()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Mode = PriorityWorkerMode.ThreadPool });
        var finished = 0;
        for (var i = 0; i < 20; i++)
        {
            scheduler.GetLane(LanePriority.Processing).SynchronizationContext.Post(_ =>
            {
                Thread.Sleep(1);
                Interlocked.Increment(ref finished);
            }, null);
        }

        scheduler.Dispose();

        finished.Should().Be(20, "queued work runs before the scheduler stops");
        scheduler.Completion.IsCompletedSuccessfully.Should().BeTrue();
    }

    [Fact]
    public async Task Dispose_WhileTimersKeepFiring_NeverDeadlocks()
    {
        for (var round = 0; round < 40; round++)
        {
            var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
            var timers = Enumerable.Range(0, 4)
                .Select(_ => scheduler.TimeProvider.CreateTimer(_ => Thread.SpinWait(50), null, TimeSpan.Zero, TimeSpan.FromMilliseconds(1)))
                .ToList();
            await Task.Delay(2);

            var dispose = Task.Run(scheduler.Dispose);
            var finished = await Task.WhenAny(dispose, Task.Delay(Bounded.Generous));

            finished.Should().BeSameAs(dispose, $"round {round}: disposal must not wait on a timer thread that waits on the scheduler");
            timers.ForEach(t => t.Dispose());
        }
    }

    private static void InterlockedMax(ref int target, int value)
    {
        var current = Volatile.Read(ref target);
        while (value > current)
        {
            var seen = Interlocked.CompareExchange(ref target, value, current);
            if (seen == current)
            {
                return;
            }

            current = seen;
        }
    }

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Bounded.Generous;
        while (!condition())
        {
            DateTime.UtcNow.Should().BeBefore(deadline);
            await Task.Delay(1);
        }
    }
}
