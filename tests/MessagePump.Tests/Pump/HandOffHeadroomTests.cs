namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// The lock time a message has left when it reaches its handler (the hand-off headroom): recorded in the statistics
/// (the least) and as a histogram; a message whose lock ran out before its handler could start is not handed over —
/// its handler is never called — and is counted as a lost lease and in <see cref="MessagePumpStatistics.ExpiredAtHandOff"/>.
/// One thread, virtual time.
/// </summary>
public class HandOffHeadroomTests
{
    private static readonly TimeSpan Lock = TimeSpan.FromSeconds(10);

    [Fact]
    public void AMessageWhoseLockRanOutBehindASlice_IsNotHandedOver_AndTheHeadroomOfTheOthersIsRecorded()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(new byte[] { 0 }, "m0");
        var handled = new List<(string Id, int Delivery, TimeSpan LockLeft)>();
        var headroom = new List<double>();
        using var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == MessagePumpDiagnostics.MeterName && instrument.Name == MessagePumpMetrics.HandOffHeadroomName)
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<double>((_, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == MessagePumpDiagnostics.PumpTag && (string?)tag.Value == "handoff")
                {
                    headroom.Add(value);
                }
            }
        });
        listener.Start();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(
                queue,
                async (context, token) =>
                {
                    handled.Add((context.Message.MessageId, context.Message.DeliveryCount, context.Message.LockedUntil - context.TimeProvider.GetUtcNow()));
                    if (context.Message.MessageId == "m1" && context.Message.DeliveryCount == 1)
                    {
                        clock.Advance(Lock * 2); // one slice longer than every lock: m2, received beside m1, waits behind it
                    }

                    await Task.Delay(TimeSpan.FromMilliseconds(100), context.TimeProvider, CancellationToken.None);
                },
                scheduler,
                new MessagePumpOptions { Name = "handoff", MaxInFlight = 2 });
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1, clock, TimeSpan.FromHours(1)); // m0: the receive's ask grows to 2
            queue.Send(new byte[] { 1 }, "m1");
            queue.Send(new byte[] { 2 }, "m2"); // received with m1 in one batch
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 3, clock, TimeSpan.FromHours(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        handled.Select(h => (h.Id, h.Delivery)).Should().NotContain(("m2", 1), "m2's first delivery had no lock left when the thread came free: its handler was not called");
        handled.Should().Contain(h => h.Id == "m2" && h.Delivery == 2);
        stats.Should().BeEquivalentTo(new { Completed = 3, ExpiredAtHandOff = 1, LeasesLost = 2 }, "m1 lost its lease under its own slice (handed over), m2 before its hand-off");
        stats!.MinHandOffHeadroom.Should().Be(handled.Min(h => h.LockLeft));
        headroom.Should().HaveCount(handled.Count, "one headroom per message handed over");
        headroom.Should().OnlyContain(seconds => seconds > 0);
        stats.ShouldBeConsistent();
        stats.ShouldMatch(queue.GetStatistics());
    }
}
