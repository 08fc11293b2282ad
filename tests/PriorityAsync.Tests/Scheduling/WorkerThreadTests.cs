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
}
