namespace PriorityAsync.MessagePump.Tests.Docs;

/// <summary>
/// docs/lease-keeper.md's program, run in the solution's tests (the page's whole program is compiled and run against
/// the packages by tests/DocsCompile): it prints what the page says it prints.
/// </summary>
public class LeaseKeeperSampleTests
{
    [Fact]
    public void TheSample_KeepsAMessageFromItsOwnLoop_AndPrintsWhatThePageSays()
    {
        var output = new StringWriter();
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(new byte[] { 42 }, "order-1");

        PriorityAsyncContext.Run(async () =>
        {
            await using var keeper = new LeaseKeeper(PriorityScheduler.Current!);
            var message = (await queue.ReceiveAsync())!;          // your own receive
            using var handle = keeper.Keep(message, queue);        // renewed from now on, in the lease lane
            await Task.Delay(TimeSpan.FromSeconds(95), clock, handle.LeaseLostToken); // long work, canceled if the lock is lost
            await handle.CompleteAsync();                          // stops renewing, then completes
            output.WriteLine($"{message.MessageId}: renewed {handle.RenewalCount} times, {keeper.GetStatistics().LeasesLost} leases lost");
        }, new PrioritySchedulerOptions { TimeProvider = clock });

        output.ToString().Should().Be("order-1: renewed 4 times, 0 leases lost" + Environment.NewLine);
        File.ReadAllText(Path.Combine(RepositoryRoot.Find(), "docs", "lease-keeper.md")).Should().Contain("It prints `order-1: renewed 4 times, 0 leases lost`");
    }
}
