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
        var before = WorkerCpuTicks(name);
        await Task.Delay(500);
        var after = WorkerCpuTicks(name);

        before.Keys.Should().HaveCount(4, "two ordinary workers, a reserved one and the timer thread (no timer armed)");
        after.Keys.Should().BeEquivalentTo(before.Keys);
        foreach (var (thread, ticks) in after)
        {
            // Clock ticks (1/100 s): a worker that spins gets several even on a busy machine; a sleeping one gets none.
            (ticks - before[thread]).Should().BeLessThanOrEqualTo(2, $"the idle worker {thread} sleeps");
        }
    }

    /// <summary>User plus system CPU time, in clock ticks, of each thread of this process whose name starts with <paramref name="prefix"/>.</summary>
    private static Dictionary<string, long> WorkerCpuTicks(string prefix)
    {
        var ticks = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var task in Directory.GetDirectories("/proc/self/task"))
        {
            try
            {
                var comm = File.ReadAllText(Path.Combine(task, "comm")).TrimEnd('\n');
                if (!comm.StartsWith(prefix + " ", StringComparison.Ordinal))
                {
                    continue;
                }

                var stat = File.ReadAllText(Path.Combine(task, "stat"));
                var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' '); // after "pid (comm) ": state is field 3
                ticks[$"{comm} ({Path.GetFileName(task)})"] = long.Parse(fields[11], System.Globalization.CultureInfo.InvariantCulture) + long.Parse(fields[12], System.Globalization.CultureInfo.InvariantCulture);
            }
            catch (IOException)
            {
                // The thread exited meanwhile.
            }
        }

        return ticks;
    }
}
