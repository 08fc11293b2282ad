using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Scheduling;

/// <summary>The threads a <see cref="PriorityTaskScheduler"/> runs its lanes on, and what the scheduler reports about them.</summary>
public class WorkerThreadTests
{
    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task Scheduler_ReportsItsOptions_AndEachLanesConcurrency(PriorityWorkerMode mode)
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions
        {
            WorkerCount = 3,
            Mode = mode,
            ReservedWorkerCount = 2,
            ReservedLane = LanePriority.Processing,
        });

        scheduler.WorkerCount.Should().Be(3);
        scheduler.Mode.Should().Be(mode);
        scheduler.ReservedWorkerCount.Should().Be(2);
        scheduler.ReservedLane.Should().Be(LanePriority.Processing);
        scheduler.Lanes.Select(l => l.TaskScheduler.MaximumConcurrencyLevel).Should().Equal(5, 5, 3);
    }

    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task OrdinaryAndReservedWorkers_AreBackgroundThreads_NamedAfterTheScheduler_ReservedOnesAtHighestPriority(PriorityWorkerMode mode)
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = "threads", WorkerCount = 1, ReservedWorkerCount = 1, Mode = mode });
        var ordinary = await Bounded.Within(scheduler.GetLane(LanePriority.Processing).Run(() => Task.FromResult(Describe())), "an item of the processing lane");
        var held = HeldWorkers.Hold(scheduler.GetLane(LanePriority.Processing));

        var reserved = await Bounded.Within(scheduler.GetLane(LanePriority.Lease).Run(() => Task.FromResult(Describe())), "lease work while the ordinary worker is held");

        held.StillHeld.Should().BeTrue();
        if (mode == PriorityWorkerMode.DedicatedThreads)
        {
            ordinary.Should().Be(("threads worker 1", ThreadPriority.Normal, true, false));
        }
        else
        {
            ordinary.PoolThread.Should().BeTrue("thread-pool mode borrows its ordinary workers from the pool");
        }

        reserved.Should().Be(("threads reserved worker 1", ThreadPriority.Highest, true, false));
        await held.DisposeAsync();

        static (string? Name, ThreadPriority Priority, bool Background, bool PoolThread) Describe()
        {
            var thread = Thread.CurrentThread;
            return (thread.Name, thread.Priority, thread.IsBackground, thread.IsThreadPoolThread);
        }
    }

    [Fact]
    public async Task DispatchedCount_CountsTheItemsTakenFromEachLane_OverAllWorkers()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, ReservedWorkerCount = 1 });
        var runs = new List<Task>();
        for (var i = 0; i < 12; i++)
        {
            runs.Add(scheduler.GetLane(LanePriority.FromRank(i % 3 == 0 ? 0 : 2)).Run(() => { }));
        }

        await Bounded.Within(Task.WhenAll(runs), "12 items over two lanes");

        scheduler.Lanes.Select(l => l.DispatchedCount).Should().Equal(4, 0, 8);
        scheduler.Lanes.Select(l => l.QueueLength).Should().Equal(0, 0, 0);
    }

    /// <summary>
    /// Idle workers sleep and cost nothing (the options' promise for reserved workers, and the point of parking the
    /// ordinary ones): once the work is done, neither kind uses CPU time, nor does the timer thread with no timer armed. Linux only: it reads each worker thread's CPU
    /// time from /proc (the kernel knows a thread by the first 15 characters of its name); elsewhere it checks nothing.
    /// </summary>
    [Fact]
    public async Task IdleWorkersAndTimerThread_Sleep_UsingNoCpuTime()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        var name = $"i{Random.Shared.Next(0x1000, 0xFFFF):x}"; // short and unique: "ixxxx worker 1", "ixxxx reserved "
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = name, WorkerCount = 2, ReservedWorkerCount = 1 });
        await using (HeldWorkers.Hold(scheduler.GetLane(LanePriority.Processing), 2))
        {
            await Bounded.Within(scheduler.GetLane(LanePriority.Lease).Run(() => { }), "a lease item on the reserved worker");
        }

        await Task.Delay(100); // the workers look for more work for a few microseconds, then sleep
        var before = OsThreads.CpuTicks(name);
        await Task.Delay(500);
        var after = OsThreads.CpuTicks(name);

        before.Keys.Should().HaveCount(4, "two ordinary workers, a reserved one and the timer thread (no timer armed)");
        after.Keys.Should().BeEquivalentTo(before.Keys);
        foreach (var (thread, ticks) in after)
        {
            // Clock ticks (1/100 s): a worker that spins gets several even on a busy machine; a sleeping one gets none.
            (ticks - before[thread]).Should().BeLessThanOrEqualTo(2, $"the idle worker {thread} sleeps");
        }
    }

    /// <summary>
    /// The thread of an idle <see cref="PriorityAsyncContextThread"/> sleeps until work arrives, as do the workers (Linux
    /// only, as above).
    /// </summary>
    [Fact]
    public async Task IdleContextThread_Sleeps_UsingNoCpuTime()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        var name = $"c{Random.Shared.Next(0x1000, 0xFFFF):x}";
        await using var owner = new PriorityAsyncContextThread(new PrioritySchedulerOptions { Name = name });
        await Bounded.Within(owner.RunAsync(LanePriority.Processing, () => Task.Delay(1)), "an item that waits once");

        await Task.Delay(100);
        var before = OsThreads.CpuTicks(name);
        await Task.Delay(500);
        var after = OsThreads.CpuTicks(name);

        before.Keys.Should().HaveCount(2, "the context's thread and its timer thread");
        foreach (var (thread, ticks) in after)
        {
            (ticks - before[thread]).Should().BeLessThanOrEqualTo(2, $"the idle thread {thread} sleeps");
        }
    }

    [Fact]
    public async Task TheStop_EndsTheSchedulersOwnTimerThread()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        var name = $"t{Random.Shared.Next(0x1000, 0xFFFF):x}";
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { Name = name, WorkerCount = 1, ReservedWorkerCount = 0 });
        await Bounded.Within(scheduler.GetLane(LanePriority.Processing).Run(() => { }), "an item");
        OsThreads.CpuTicks(name + " timers").Should().HaveCount(1);

        scheduler.Dispose();

        await OsThreads.GoneAsync(name + " timers", "the timer thread of a disposed scheduler");
    }
}
