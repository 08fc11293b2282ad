namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// Admission by spare capacity (docs/message-pump.md, "Admission"): on one thread and virtual time, the number of
/// messages in flight follows what the handlers cost — it grows on IO-heavy work until the thread is busy, stays low on
/// CPU-heavy work, and a broker that is slow to answer a receive does not make the pump over-admit. No MaxInFlight is set.
/// </summary>
public class AdmissionTests
{
    [Fact]
    public void IoHeavy_InFlightGrowsUntilTheThreadIsBusy_TotalNearTheLowerBound()
    {
        // 100 messages × 20 × (10 ms CPU + 1 000 ms IO): the thread is busy 1 % of the time per message, so about 100
        // messages in flight keep it busy. Lower bound: one message's own path, 20 × 1 010 ms = 20.2 s (CPU work 20 s).
        var (stats, elapsed) = Run(messages: 100, steps: 20, cpu: TimeSpan.FromMilliseconds(10), io: TimeSpan.FromSeconds(1), latency: TimeSpan.Zero);

        stats.LeasesLost.Should().Be(0);
        stats.Completed.Should().Be(100);
        stats.PeakInFlight.Should().BeGreaterThanOrEqualTo(90, "the receive lane keeps finding the thread idle while handlers wait on IO");
        elapsed.Should().BeLessThan(TimeSpan.FromSeconds(20.2 * 1.1), "within 1.1× of one message's own path (4 per worker would take ~505 s)");
    }

    [Fact]
    public void CpuHeavy_InFlightStaysLow_TotalAtTheCpuBound()
    {
        // 20 messages × 10 × (500 ms CPU + 10 ms IO): one message alone keeps the thread 98 % busy.
        var (stats, elapsed) = Run(messages: 20, steps: 10, cpu: TimeSpan.FromMilliseconds(500), io: TimeSpan.FromMilliseconds(10), latency: TimeSpan.Zero);

        stats.LeasesLost.Should().Be(0);
        stats.Completed.Should().Be(20);
        stats.PeakInFlight.Should().BeLessThanOrEqualTo(3, "the thread is never idle for long once two messages alternate");
        elapsed.Should().BeLessThan(TimeSpan.FromSeconds(100 * 1.1), "within 1.1× of the CPU work (20 × 10 × 500 ms)");
    }

    [Theory]
    [InlineData(20)]
    [InlineData(100)]
    [InlineData(500)]
    public void SlowBrokerReceive_CpuHeavy_DoesNotOverAdmit(int latencyMs)
    {
        var (stats, _) = Run(messages: 20, steps: 10, cpu: TimeSpan.FromMilliseconds(500), io: TimeSpan.FromMilliseconds(10), latency: TimeSpan.FromMilliseconds(latencyMs));

        stats.LeasesLost.Should().Be(0);
        stats.Completed.Should().Be(20);
        stats.PeakInFlight.Should().BeLessThanOrEqualTo(3, $"a receive answered {latencyMs} ms after the thread was idle admits no more than the idle moment allowed");
    }

    [Theory]
    [InlineData(1)]
    [InlineData(20)]
    public void NoOpHandlers_SlowBroker_BatchesGrowToAmortiseTheRoundTrip(int latencyMs)
    {
        var (stats, elapsed) = Run(messages: 2_000, steps: 0, cpu: TimeSpan.Zero, io: TimeSpan.Zero, latency: TimeSpan.FromMilliseconds(latencyMs));

        stats.Completed.Should().Be(2_000);
        stats.LeasesLost.Should().Be(0);

        // One message per round trip would take 2 000 × (receive + complete) ≥ 2 000 × 2 × latency.
        elapsed.Should().BeLessThan(TimeSpan.FromMilliseconds(2_000 * 2 * latencyMs / 10.0), "batches of up to 100 receive and complete many messages per round trip");
    }

    private static (MessagePumpStatistics Stats, TimeSpan Elapsed) Run(int messages, int steps, TimeSpan cpu, TimeSpan io, TimeSpan latency)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions
        {
            LockDuration = TimeSpan.FromSeconds(5),
            Latency = latency,
        });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        MessagePumpStatistics? stats = null;
        var elapsed = TimeSpan.Zero;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, token) =>
                {
                    for (var step = 0; step < steps; step++)
                    {
                        clock.Advance(cpu); // CPU holding the thread
                        await Task.Delay(io, context.TimeProvider, token);
                    }
                },
                scheduler);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, clock, TimeSpan.FromHours(1), TimeSpan.FromMilliseconds(10));
            elapsed = clock.Elapsed;
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        return (stats!, elapsed);
    }
}
