namespace PriorityAsync.Messaging.Tests.Pump;

/// <summary>
/// The broker-latency table of the issue, on one thread and virtual time (the seed's shape, time-scaled: 40 messages
/// of 10 × (100 ms CPU + 200 ms awaited I/O), a 1.5 s lock, default options): at 0 to 100 ms per broker call, no lease
/// is lost and every message is completed once. LeaseFromTheAnswerTests proves the bound behind it.
/// </summary>
public class BrokerLatencyTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(20)]
    [InlineData(50)]
    [InlineData(100)]
    public void EveryLatency_OneThread_NoLeaseLost_EveryMessageCompletedOnce(int latencyMs)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryLeaseBroker(clock).CreateQueue("orders", new InMemoryQueueOptions
        {
            LockDuration = TimeSpan.FromMilliseconds(1500),
            Latency = TimeSpan.FromMilliseconds(latencyMs),
        });
        for (var i = 0; i < 40; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        var worstLockUsedAtStart = TimeSpan.Zero;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new MessagePump(
                queue,
                async (context, token) =>
                {
                    var used = TimeSpan.FromMilliseconds(1500) - (context.LockedUntil - clock.GetUtcNow());
                    worstLockUsedAtStart = used > worstLockUsedAtStart ? used : worstLockUsedAtStart;
                    for (var step = 0; step < 10; step++)
                    {
                        clock.Advance(TimeSpan.FromMilliseconds(100)); // CPU holding the thread
                        await Task.Delay(TimeSpan.FromMilliseconds(200), context.TimeProvider, token);
                    }
                },
                scheduler);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 40, clock, TimeSpan.FromHours(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        stats!.LeasesLost.Should().Be(0, $"at {latencyMs} ms per broker call (worst lock used when a handler started: {worstLockUsedAtStart.TotalMilliseconds} ms)");
        var broker = queue.GetStatistics();
        broker.Completed.Should().Be(40);
        broker.Received.Should().Be(40, "no message was delivered twice");
        stats.ShouldMatch(broker);
    }
}
