namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>StopAsync: stop receiving, let messages in flight finish within the timeout, abandon the rest; nothing left locked.</summary>
public class PumpStopTests
{
    private readonly VirtualTimeProvider _clock = new();

    [Fact]
    public void Stop_InFlightFinishWithinTimeout_AreCompleted_TheRestStaysQueued()
    {
        var queue = CreateQueue(10);
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(_clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                (context, cancellationToken) => Task.Delay(TimeSpan.FromSeconds(5), context.TimeProvider, cancellationToken),
                scheduler,
                new MessagePumpOptions { MaxInFlight = 3, ShutdownTimeout = TimeSpan.FromSeconds(30) });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(2), scheduler.TimeProvider);
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        stats.Should().BeEquivalentTo(new { Received = 3, Completed = 3, Abandoned = 0, AbandonedAtStop = 0, InFlight = 0 });
        var broker = queue.GetStatistics();
        broker.Should().BeEquivalentTo(new { Completed = 3, InFlight = 0, Available = 7, LeasesLost = 0 });
        broker.ShouldBeConsistent();
        stats!.ShouldBeConsistent();
        stats.ShouldMatch(broker);
    }

    [Fact]
    public void Stop_TimeoutExpires_CancelsHandlers_AndAbandonsTheirMessages()
    {
        var queue = CreateQueue(10);
        var canceled = 0;
        MessagePumpStatistics? stats = null;
        var stoppedAfter = TimeSpan.Zero;
        VirtualRun.Run(_clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, cancellationToken) =>
                {
                    using var registration = cancellationToken.Register(() => canceled++);
                    await Task.Delay(TimeSpan.FromSeconds(100), context.TimeProvider, cancellationToken);
                },
                scheduler,
                new MessagePumpOptions { MaxInFlight = 3, ShutdownTimeout = TimeSpan.FromSeconds(10) });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(5), scheduler.TimeProvider);
            var start = _clock.Elapsed;
            await pump.StopAsync();
            stoppedAfter = _clock.Elapsed - start;
            await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider); // let the canceled handlers unwind
            stats = pump.GetStatistics();
        });

        stoppedAfter.Should().Be(TimeSpan.FromSeconds(10));
        canceled.Should().Be(3);
        stats.Should().BeEquivalentTo(new { Received = 3, Completed = 0, Abandoned = 3, AbandonedAtStop = 3, HandlerFailures = 0, LeasesLost = 0, InFlight = 0 });
        var broker = queue.GetStatistics();
        broker.Should().BeEquivalentTo(new { Abandoned = 3, Completed = 0, InFlight = 0, Available = 10, LeaseLostErrors = 0 });
        broker.ShouldBeConsistent();
        stats!.ShouldBeConsistent();
        stats.ShouldMatch(broker);
    }

    [Fact]
    public void Stop_HandlerIgnoresCancellation_MessageIsAbandoned_AndNeverCompletedOrRenewedLater()
    {
        var queue = CreateQueue(2);
        var finishedHandlers = 0;
        VirtualRun.Run(_clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, _) =>
                {
                    await Task.Delay(TimeSpan.FromSeconds(200), context.TimeProvider); // ignores its token
                    finishedHandlers++;
                },
                scheduler,
                new MessagePumpOptions { MaxInFlight = 2, ShutdownTimeout = TimeSpan.FromSeconds(5) });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
            await pump.StopAsync();
            await Task.Delay(TimeSpan.FromSeconds(300), scheduler.TimeProvider);
        });

        finishedHandlers.Should().Be(2);
        var broker = queue.GetStatistics();
        broker.Should().BeEquivalentTo(new { Abandoned = 2, Completed = 0, InFlight = 0, LeaseLostErrors = 0, LeasesLost = 0 });
        broker.ShouldBeConsistent();
    }

    [Fact]
    public void Stop_CanceledToken_AbandonsAtOnce()
    {
        var queue = CreateQueue(1);
        var stoppedAfter = TimeSpan.MaxValue;
        VirtualRun.Run(_clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(queue, (c, ct) => Task.Delay(TimeSpan.FromSeconds(100), c.TimeProvider, ct), scheduler);
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
            var start = _clock.Elapsed;
            await pump.StopAsync(new CancellationToken(canceled: true));
            stoppedAfter = _clock.Elapsed - start;
        });

        stoppedAfter.Should().Be(TimeSpan.Zero);
        queue.GetStatistics().Should().BeEquivalentTo(new { Abandoned = 1, InFlight = 0 });
    }

    [Fact]
    public void Lifecycle_StopTwice_DisposeAfterStop_StartAfterStopThrows()
    {
        var queue = CreateQueue(1);
        VirtualRun.Run(_clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(queue, (_, _) => Task.CompletedTask, scheduler);
            await pump.StartAsync();
            await pump.Invoking(p => p.StartAsync()).Should().ThrowAsync<InvalidOperationException>().WithMessage("Message pump 'message-pump' was already started; a pump runs once.");
            var first = pump.StopAsync();
            var second = pump.StopAsync();
            await Task.WhenAll(first, second);
            await pump.DisposeAsync();
            await pump.Invoking(p => p.StartAsync()).Should().ThrowAsync<InvalidOperationException>();
        });
    }

    [Fact]
    public void Stop_BeforeStart_ReceivesNothing()
    {
        var queue = CreateQueue(1);
        var logger = new ListLogger();
        VirtualRun.Run(_clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(queue, (_, _) => Task.CompletedTask, scheduler, logger: logger);
            await pump.StopAsync();
        });

        queue.GetStatistics().Received.Should().Be(0);
        logger.Entries.Should().BeEmpty("a pump that never started neither stops nor reports a stop");
    }

    private InMemoryQueue CreateQueue(int messages)
    {
        var queue = new InMemoryTransport(_clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        return queue;
    }
}
