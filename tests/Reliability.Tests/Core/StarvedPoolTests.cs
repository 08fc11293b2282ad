using PriorityAsync.Reliability.Tests.Support;

namespace PriorityAsync.Reliability.Tests.Core;

[CollectionDefinition(nameof(StarvedPoolTests), DisableParallelization = true)]
public class StarvedPoolCollection
{
}

/// <summary>Scenario 5: every pool thread blocked; lease-lane timers keep firing and both schedulers still stop.</summary>
[Collection(nameof(StarvedPoolTests))]
public class StarvedPoolTests
{
    [Fact]
    public void StarvedPool_LeaseTimersKeepFiring_AndDisposeOfBothSchedulersCompletes()
    {
        var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Mode = PriorityWorkerMode.DedicatedThreads, ShutdownTimeout = TimeSpan.FromSeconds(5) });
        var thread = new PriorityAsyncContextThread(new PrioritySchedulerOptions { ShutdownTimeout = TimeSpan.FromSeconds(5) });
        var renewals = 0;
        using var enoughRenewals = new ManualResetEventSlim();
        using var stop = new CancellationTokenSource();
        using (StarvedThreadPool.Begin())
        {
            var lease = scheduler.GetLane(LanePriority.Lease);
            using var periodic = scheduler.TimeProvider.CreateTimer(
                _ =>
                {
                    if (PriorityScheduler.CurrentLane == lease && Interlocked.Increment(ref renewals) >= 20)
                    {
                        enoughRenewals.Set();
                    }
                },
                null,
                TimeSpan.FromMilliseconds(5),
                TimeSpan.FromMilliseconds(5));
            _ = lease.Run(async () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(5), PriorityScheduler.Current!.TimeProvider);
                }
            });

            Bounded.Wait(enoughRenewals.WaitHandle, "20 lease-lane timer firings on a starved pool", Bounded.Patient);
            stop.Cancel();
            periodic.Dispose();

            Bounded.Wait(Task.Factory.StartNew(scheduler.Dispose, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default), "Dispose of the dedicated scheduler on a starved pool", Bounded.Patient);
            Bounded.Wait(Task.Factory.StartNew(thread.Dispose, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default), "Dispose of the context thread on a starved pool", Bounded.Patient);
            scheduler.Completion.IsCompleted.Should().BeTrue();
            thread.Completion.IsCompleted.Should().BeTrue();
        }

        Volatile.Read(ref renewals).Should().BeGreaterThanOrEqualTo(20);
    }
}
