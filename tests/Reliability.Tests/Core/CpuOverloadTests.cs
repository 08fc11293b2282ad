using PriorityAsync.Reliability.Tests.Support;

namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>
/// One thread overloaded with CPU work on virtual time: many processing loops whose slices hold the thread, and lease
/// loops renewing on a schedule. Every renewal runs within one slice of its due time, and the run takes exactly the
/// CPU it was given. Seeded, deterministic.
/// </summary>
public class CpuOverloadTests
{
    [Theory]
    [InlineData(11)]
    [InlineData(12)]
    [InlineData(13)]
    public void ManyCpuLoops_OnOneThread_EveryRenewalWithinOneSlice(int seed)
    {
        var random = new Random(seed);
        var loops = ReliabilitySettings.Long ? 200 : 40;
        var slice = TimeSpan.FromMilliseconds(random.Next(50, 500));
        var steps = random.Next(5, 20);
        var renewEvery = TimeSpan.FromSeconds(2);
        var clock = new VirtualTimeProvider();
        var worstLateness = TimeSpan.Zero;
        var renewals = 0;
        PriorityAsyncContext.Run(
            async () =>
            {
                var scheduler = PriorityScheduler.Current!;
                using var done = new CancellationTokenSource();
                var leases = Enumerable.Range(0, 5).Select(_ => scheduler.GetLane(LanePriority.Lease).Run(async () =>
                {
                    while (!done.IsCancellationRequested)
                    {
                        var due = clock.GetUtcNow() + renewEvery;
                        await Task.Delay(renewEvery, scheduler.TimeProvider).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
                        var late = clock.GetUtcNow() - due;
                        worstLateness = late > worstLateness ? late : worstLateness;
                        renewals++;
                    }
                })).ToArray();
                var work = Enumerable.Range(0, loops).Select(_ => scheduler.GetLane(LanePriority.Processing).Run(async () =>
                {
                    for (var step = 0; step < steps; step++)
                    {
                        clock.Advance(slice);
                        await PriorityScheduler.YieldTo(LanePriority.Processing);
                    }
                })).ToArray();
                await Task.WhenAll(work);
                await done.CancelAsync();
                await Task.WhenAll(leases);
            },
            new PrioritySchedulerOptions { TimeProvider = clock });

        var cpu = slice * loops * steps;
        renewals.Should().BeGreaterThan(0);
        worstLateness.Should().BeLessThanOrEqualTo(slice, $"a renewal waits at most for the slice running when it falls due (seed {seed})");
        clock.Elapsed.Should().BeGreaterThanOrEqualTo(cpu).And.BeLessThan(cpu + renewEvery + slice, $"the run takes the CPU it was given (seed {seed})");
    }
}
