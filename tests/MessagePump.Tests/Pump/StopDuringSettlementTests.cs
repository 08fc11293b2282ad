namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// StopAsync while settlements are under way, on a broker that takes time to answer and fails some completes: it
/// returns only when every settlement in flight has finished or failed, so the broker holds no lock afterwards.
/// Virtual time; every stop moment is drawn from the seed in the test name.
/// </summary>
public class StopDuringSettlementTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void StopAtRandomMoments_WithBrokerLatencyAndFailingCompletes_LeavesNothingLocked(int seed)
    {
        var random = new Random(seed);
        for (var round = 0; round < 250; round++)
        {
            var latency = TimeSpan.FromMilliseconds(random.Next(0, 301));
            var stopAfter = TimeSpan.FromMilliseconds(random.Next(0, 3000));
            var shutdownTimeout = TimeSpan.FromMilliseconds(random.Next(0, 400));
            var work = TimeSpan.FromMilliseconds(random.Next(50, 600));
            var clock = new VirtualTimeProvider();
            var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions
            {
                LockDuration = TimeSpan.FromSeconds(5),
                Latency = latency,
                CompleteFailureRate = 0.3,
                FaultSeed = seed * 1000 + round,
            });
            for (var i = 0; i < 8; i++)
            {
                queue.Send(new byte[] { (byte)i });
            }

            MessagePumpStatistics? stats = null;
            VirtualRun.Run(clock, async scheduler =>
            {
                var pump = new PriorityMessagePump(
                    queue,
                    (context, token) => Task.Delay(work, context.TimeProvider, token),
                    scheduler,
                    new MessagePumpOptions { MaxInFlight = 3, ShutdownTimeout = shutdownTimeout, TransientRetryDelay = TimeSpan.FromMilliseconds(200), LeaseKeeper = new() { TransientRetryDelay = TimeSpan.FromMilliseconds(200) } });
                await pump.StartAsync();
                await Task.Delay(stopAfter, scheduler.TimeProvider);
                await pump.StopAsync();
                stats = pump.GetStatistics();
            });

            var broker = queue.GetStatistics();
            var replay = $"seed {seed}, round {round}: latency {latency.TotalMilliseconds} ms, stop after {stopAfter.TotalMilliseconds} ms, shutdown timeout {shutdownTimeout.TotalMilliseconds} ms, work {work.TotalMilliseconds} ms";
            broker.InFlight.Should().Be(0, $"a stopped pump leaves nothing locked ({replay})");
            stats!.InFlight.Should().Be(0, replay);
            broker.ShouldBeConsistent();
            stats.ShouldBeConsistent();
        }
    }
}
