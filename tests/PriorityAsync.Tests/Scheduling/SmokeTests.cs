namespace PriorityAsync.Tests.Scheduling;

public class SmokeTests
{
    [Fact]
    public void VirtualTime_LeaseLaneRunsBeforeProcessing()
    {
        var clock = new VirtualTimeProvider();
        var log = new List<string>();
        PriorityAsyncContext.Run(async () =>
        {
            var scheduler = PriorityScheduler.Current!;
            var lease = scheduler.GetLane(LanePriority.Lease).Run(async () =>
            {
                for (var i = 0; i < 3; i++)
                {
                    await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
                    log.Add($"lease {clock.Elapsed.TotalSeconds}");
                }
            });
            var work = scheduler.GetLane(LanePriority.Processing).Run(async () =>
            {
                for (var i = 0; i < 3; i++)
                {
                    clock.Advance(TimeSpan.FromSeconds(1.5));
                    log.Add($"cpu {clock.Elapsed.TotalSeconds}");
                    await Task.Delay(TimeSpan.FromSeconds(0.1), scheduler.TimeProvider);
                }
            });
            await Task.WhenAll(lease, work);
        }, new PrioritySchedulerOptions { TimeProvider = clock });
        log.Should().NotBeEmpty();
        Console.WriteLine(string.Join("\n", log));
    }
}
