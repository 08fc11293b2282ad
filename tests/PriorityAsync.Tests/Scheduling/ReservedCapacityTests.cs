using System.Globalization;
using PriorityAsync.Tests.Support;

namespace PriorityAsync.Tests.Scheduling;

/// <summary>
/// Reserved workers: with every ordinary worker held by a blocking slice, lease work still runs — asserted while the
/// blockers are still blocked, so no timing is involved.
/// </summary>
public class ReservedCapacityTests
{
    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task LeaseTimerContinuation_RunsWhileEveryOrdinaryWorkerIsBlocked(PriorityWorkerMode mode)
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Mode = mode });
        var held = HeldWorkers.Hold(scheduler.GetLane(LanePriority.Processing), count: 2);

        var renewal = scheduler.GetLane(LanePriority.Lease).Run(async () =>
        {
            await Task.Delay(TimeSpan.FromMilliseconds(20), scheduler.TimeProvider);
            return (PriorityScheduler.CurrentLane!.Name, Thread.CurrentThread.Name);
        });
        var (lane, thread) = await renewal.WaitAsync(Bounded.Generous);

        held.StillHeld.Should().BeTrue("the renewal ran while both ordinary workers were still held");
        lane.Should().Be("Lease");
        thread.Should().Contain("reserved worker");
        await held.DisposeAsync();
    }

    [Theory]
    [InlineData(ThreadPriority.Normal)]
    [InlineData(ThreadPriority.Lowest)]
    public async Task LeaseWorkPostedAsTheLastOrdinaryWorkerTakesASlice_RunsBeforeTheSliceEnds(ThreadPriority priority)
    {
        // The hand-off race: an ordinary worker that was looking for work takes a processing slice just as lease work
        // arrives. The poster sees a worker searching and wakes nobody; the worker, now busy, must wake the idle
        // reserved worker, or the lease work waits for the whole slice. Each trial's slice ends only when the lease
        // work has run (or after a bound, which fails the test), so no timing is asserted.
        const int Trials = 2000;
        var seed = Environment.TickCount;
        var random = new Random(seed);
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, OrdinaryWorkerPriority = priority });
        var processing = scheduler.GetLane(LanePriority.Processing);
        var lease = scheduler.GetLane(LanePriority.Lease);

        for (var trial = 0; trial < Trials; trial++)
        {
            using var leaseRan = new ManualResetEventSlim();
            var slice = processing.Run(() => Task.FromResult(leaseRan.Wait(Bounded.Generous)));
            Thread.SpinWait(random.Next(0, 400)); // lands the lease post at varying points of the worker's hand-off
            var renewal = lease.Run(leaseRan.Set);

            (await Bounded.Within(slice, "the processing slice")).Should().BeTrue(
                $"trial {trial}: the lease work must run while the slice holds the only ordinary worker (seed {seed}; replay with new Random({seed}))");
            await Bounded.Within(renewal, "the lease work");
        }
    }

    [Fact]
    public async Task ReservedWorker_NeverRunsALessUrgentLane()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        var held = HeldWorkers.Hold(scheduler.GetLane(LanePriority.Processing));

        var processing = scheduler.GetLane(LanePriority.Processing).Run(() => { });
        var lease = scheduler.GetLane(LanePriority.Lease).Run(() => { });
        await lease.WaitAsync(Bounded.Generous);

        processing.IsCompleted.Should().BeFalse("processing waits for an ordinary worker; the reserved one runs only lease work");
        await held.DisposeAsync();
        await processing.WaitAsync(Bounded.Generous);
    }

    [Fact]
    public async Task ReservedWorker_NeverTakesAnOverdueItemOfALessUrgentLane()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions
        {
            WorkerCount = 1,
            Lanes = [new LaneOptions("Lease"), new LaneOptions("Processing"), new LaneOptions("Receive", starvationBound: TimeSpan.Zero)],
        });
        var held = HeldWorkers.Hold(scheduler.GetLane(LanePriority.Processing));

        var receive = scheduler.GetLane(LanePriority.Receive).Run(() => { });
        await Task.Delay(20); // the receive item is overdue: it has waited longer than its zero bound
        await scheduler.GetLane(LanePriority.Lease).Run(() => { }).WaitAsync(Bounded.Generous);

        held.StillHeld.Should().BeTrue();
        receive.IsCompleted.Should().BeFalse("an overdue item overtakes more urgent lanes only on a worker that runs its lane");
        await held.DisposeAsync();
        await receive.WaitAsync(Bounded.Generous);
    }

    [Fact]
    public async Task WithoutReservation_LeaseWorkWaitsBehindTheBlockedWorkers()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedWorkerCount = 0 });
        var held = HeldWorkers.Hold(scheduler.GetLane(LanePriority.Processing));

        var lease = scheduler.GetLane(LanePriority.Lease).Run(() => { });
        await Task.Delay(100);

        lease.IsCompleted.Should().BeFalse("with no reserved worker, lease work waits for the only worker");
        await held.DisposeAsync();
        await lease.WaitAsync(Bounded.Generous);
    }

    [Fact]
    public async Task ReservedLane_CoversItAndEveryMoreUrgentLane()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, ReservedLane = LanePriority.Processing });
        var held = HeldWorkers.Hold(scheduler.GetLane(LanePriority.Receive));

        await scheduler.GetLane(LanePriority.Processing).Run(() => { }).WaitAsync(Bounded.Generous);
        await scheduler.GetLane(LanePriority.Lease).Run(() => { }).WaitAsync(Bounded.Generous);

        scheduler.GetLane(LanePriority.Lease).TaskScheduler.MaximumConcurrencyLevel.Should().Be(2);
        scheduler.GetLane(LanePriority.Receive).TaskScheduler.MaximumConcurrencyLevel.Should().Be(1);
        await held.DisposeAsync();
    }

    [Fact]
    public async Task HungLeaseSlice_IsNamedByTheStallWatchdog_WhileItIsStillRunning()
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, StallThreshold = TimeSpan.FromMilliseconds(50) });
        var inProgress = new TaskCompletionSource<StallDetectedEventArgs>(TaskCreationOptions.RunContinuationsAsynchronously);
        scheduler.StallInProgress += (_, e) => inProgress.TrySetResult(e);
        using var release = new ManualResetEventSlim();

        var hung = scheduler.GetLane(LanePriority.Lease).Run(() => release.Wait(Bounded.Generous)); // a renewal call that hangs
        var stall = await inProgress.Task.WaitAsync(Bounded.Generous);

        release.IsSet.Should().BeFalse("the watchdog reported the slice while it was still running");
        stall.Lane.Name.Should().Be("Lease");
        stall.Duration.Should().BeGreaterThanOrEqualTo(TimeSpan.FromMilliseconds(50));
        release.Set();
        await hung.WaitAsync(Bounded.Generous);
    }

    [Theory]
    [InlineData(-1, 0, "ReservedWorkerCount")]
    [InlineData(PriorityTaskSchedulerOptions.MaxWorkerCount + 1, 0, "ReservedWorkerCount")]
    [InlineData(1, 3, "ReservedLane")]
    public void ReservationOptions_AreValidated_NamingTheOption(int reserved, int laneRank, string option)
    {
        var create = () => new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { ReservedWorkerCount = reserved, ReservedLane = LanePriority.FromRank(laneRank) });

        create.Should().Throw<ArgumentOutOfRangeException>().Which.ParamName.Should().Be(option);
    }

    [Theory]
    [InlineData(ThreadPriority.BelowNormal)]
    [InlineData(ThreadPriority.Lowest)]
    public async Task OrdinaryWorkerPriority_LowersOrdinaryWorkersOnly(ThreadPriority priority)
    {
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1, OrdinaryWorkerPriority = priority });
        var own = ThreadScheduling.OfCurrentThread();

        var ordinary = await scheduler.GetLane(LanePriority.Processing).Run(() => Task.FromResult(ThreadScheduling.OfCurrentThread()));
        using var release = new ManualResetEventSlim();
        using var holding = new ManualResetEventSlim();
        var held = scheduler.GetLane(LanePriority.Processing).Run(() =>
        {
            holding.Set();
            release.Wait(Bounded.Generous); // blocks the one ordinary worker
            return Task.CompletedTask;
        });
        holding.Wait(Bounded.Generous).Should().BeTrue("the ordinary worker took the blocking item");
        var reserved = await scheduler.GetLane(LanePriority.Lease).Run(() => Task.FromResult(ThreadScheduling.OfCurrentThread()));
        release.Set();
        await held;

        // Linux: BelowNormal adds 5 to the nice value; Lowest moves the thread to SCHED_IDLE (strict, like Windows).
        var expected = !OperatingSystem.IsLinux() ? own
            : priority == ThreadPriority.Lowest ? own with { Policy = WorkerThreadPriority.IdlePolicy }
            : own with { Nice = Math.Min(19, own.Nice + 5) };
        ordinary.Should().Be(expected, "an ordinary worker runs at the lowered priority");
        reserved.Should().Be(own, "the reserved worker keeps the process's priority");
    }

    /// <summary>A thread's Linux nice value and scheduling policy (0 and <c>SCHED_OTHER</c> elsewhere).</summary>
    private readonly record struct ThreadScheduling(int Nice, int Policy)
    {
        public static ThreadScheduling OfCurrentThread()
        {
            if (!OperatingSystem.IsLinux())
            {
                return default;
            }

            // proc(5): the name (field 2) is in parentheses and may hold spaces, so count from the last ')'; the
            // fields after it start at field 3. Nice is field 19, the policy field 41.
            var stat = File.ReadAllText("/proc/thread-self/stat");
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return new(int.Parse(fields[19 - 3], CultureInfo.InvariantCulture), int.Parse(fields[41 - 3], CultureInfo.InvariantCulture));
        }
    }

    [Theory]
    [InlineData(ThreadPriority.Highest, PriorityWorkerMode.DedicatedThreads)]
    [InlineData(ThreadPriority.AboveNormal, PriorityWorkerMode.DedicatedThreads)]
    [InlineData((ThreadPriority)42, PriorityWorkerMode.DedicatedThreads)]
    [InlineData(ThreadPriority.Lowest, PriorityWorkerMode.ThreadPool)]
    public void OrdinaryWorkerPriority_OutOfRangeOrOnPoolThreads_IsRejectedNamingTheOption(ThreadPriority priority, PriorityWorkerMode mode)
    {
        var create = () => new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { OrdinaryWorkerPriority = priority, Mode = mode });

        create.Should().Throw<ArgumentException>().Which.ParamName.Should().Be(nameof(PriorityTaskSchedulerOptions.OrdinaryWorkerPriority));
    }
}
