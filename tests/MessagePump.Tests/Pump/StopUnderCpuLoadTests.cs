namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// <see cref="MessagePumpOptions.ShutdownTimeout"/> bounds <see cref="PriorityMessagePump.StopAsync"/> while handlers
/// keep the processing lane busy with CPU chunks that yield between them: the receive lane, the least urgent, never runs
/// then, and the stop must not wait for it. Virtual time on one thread: each chunk holds the thread while the clock
/// moves 250 ms; the stop may take the timeout plus the chunk running when it expires, no more.
/// </summary>
public class StopUnderCpuLoadTests
{
    private static readonly TimeSpan Chunk = TimeSpan.FromMilliseconds(250);

    [Theory]
    [InlineData(2)]
    [InlineData(5)]
    public void Stop_HandlersBusyWithYieldingCpuChunks_ReturnsWithinTheTimeoutPlusOneChunk_AndCancelsThem(int timeoutSeconds)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        for (var i = 0; i < 8; i++)
        {
            queue.Send(new[] { (byte)i });
        }

        var shutdownTimeout = TimeSpan.FromSeconds(timeoutSeconds);
        var canceled = 0;
        var stoppedAfter = TimeSpan.MaxValue;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, cancellationToken) =>
                {
                    for (var chunk = 0; chunk < 40; chunk++)
                    {
                        if (cancellationToken.IsCancellationRequested)
                        {
                            canceled++;
                            cancellationToken.ThrowIfCancellationRequested();
                        }

                        clock.Advance(Chunk);                       // CPU work: the thread is held while time passes
                        await PriorityScheduler.YieldIfNeeded();    // the one rule: yield between chunks
                    }
                },
                scheduler,
                new MessagePumpOptions { MaxInFlight = 4, ShutdownTimeout = shutdownTimeout });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(2), clock);
            var start = clock.Elapsed;
            await pump.StopAsync();
            stoppedAfter = clock.Elapsed - start;
            stats = pump.GetStatistics();
        });

        stoppedAfter.Should().BeLessThanOrEqualTo(shutdownTimeout + Chunk, "the stop waits the timeout, then cancels the handlers; it does not wait for the receive lane to run");
        stats!.Received.Should().BeGreaterThan(0);
        canceled.Should().Be((int)stats.Received, "every running handler's token is canceled when the timeout expires");
        stats.Should().BeEquivalentTo(new { Completed = 0, AbandonedAtStop = stats.Received, InFlight = 0, LeasesLost = 0 });
        queue.GetStatistics().Should().BeEquivalentTo(new { InFlight = 0, Completed = 0, Available = 8 });
    }
}
