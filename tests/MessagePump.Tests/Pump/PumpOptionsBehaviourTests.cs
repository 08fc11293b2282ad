namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>What the documented option values do at run time: batching off, and the shutdown wait at its limits. Virtual time, one thread.</summary>
public class PumpOptionsBehaviourTests
{
    /// <summary>
    /// <c>MaxBatchSize = 1</c> turns batching off for receives and completions; a source that does not complete
    /// batches natively gets one complete call per message; one that does gets batches when completions overlap a call.
    /// </summary>
    [Theory]
    [InlineData(1, true)]
    [InlineData(MessagePumpOptions.DefaultMaxBatchSize, false)]
    [InlineData(MessagePumpOptions.DefaultMaxBatchSize, true)]
    public void Completions_GoInBatches_OnlyWhenAllowedAndNative(int maxBatchSize, bool native)
    {
        const int messages = 20;
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { Latency = TimeSpan.FromMilliseconds(5) });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        var source = new ScriptedSource(queue) { CompletesBatchesNatively = native };
        MessagePumpStatistics? stats = null;
        Lane? leaseLane = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(source, (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { MaxBatchSize = maxBatchSize });
            leaseLane = pump.LeaseLane;
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, clock, TimeSpan.FromMinutes(1), TimeSpan.FromMilliseconds(10));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        stats.Should().BeEquivalentTo(new { Received = messages, Completed = messages, LeasesLost = 0 });
        source.SettleLanes.Should().NotBeEmpty().And.OnlyContain(lane => lane == leaseLane, "settlement runs in the lease lane");
        if (maxBatchSize == 1)
        {
            source.Receives.Should().OnlyContain(r => r.Asked == 1);
        }
        else
        {
            source.Receives.Max(r => r.Asked).Should().BeGreaterThan(1, "receives grow to batches");
        }

        if (maxBatchSize > 1 && native)
        {
            source.CompleteBatches.Sum().Should().Be(messages);
            source.CompleteBatches.Should().Contain(n => n > 1, "completions that overlap a call go together in the next");
            source.CompleteCalls.Should().Be(0);
        }
        else
        {
            source.CompleteBatches.Should().BeEmpty();
            source.CompleteCalls.Should().Be(messages);
        }
    }

    [Fact]
    public void ReceivesAndCompletions_CarryAtMostMaxBatchSize()
    {
        const int messages = 40;
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { Latency = TimeSpan.FromMilliseconds(5) });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        var source = new ScriptedSource(queue) { CompletesBatchesNatively = true };
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(source, (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { MaxBatchSize = 3 });
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, clock, TimeSpan.FromMinutes(1), TimeSpan.FromMilliseconds(10));
            await pump.StopAsync();
        });

        source.Receives.Max(r => r.Asked).Should().Be(3);
        source.CompleteBatches.Max().Should().Be(3);
        source.CompleteBatches.Sum().Should().Be(messages);
    }

    [Fact]
    public void Stop_ZeroShutdownTimeout_AbandonsTheMessagesInFlightAtOnce()
    {
        var (stats, stoppedAfter, handlerCanceled, logger) = StopWhileAHandlerRuns(TimeSpan.Zero, handlerTime: TimeSpan.FromMinutes(10));

        stoppedAfter.Should().Be(TimeSpan.Zero);
        logger.Entries.Where(e => e.EventId.Id == 30).Should().ContainSingle().Which.Message.Should().StartWith("Message pump message-pump: m1 did not finish within the shutdown timeout");
        handlerCanceled.Should().BeTrue();
        stats.Should().BeEquivalentTo(new { Received = 1, Completed = 0, Abandoned = 1, AbandonedAtStop = 1, InFlight = 0 });
    }

    [Fact]
    public void Stop_InfiniteShutdownTimeout_WaitsForTheHandlersHoweverLong()
    {
        var (stats, stoppedAfter, handlerCanceled, _) = StopWhileAHandlerRuns(Timeout.InfiniteTimeSpan, handlerTime: TimeSpan.FromHours(2));

        stoppedAfter.Should().Be(TimeSpan.FromHours(2) - TimeSpan.FromSeconds(1));
        handlerCanceled.Should().BeFalse();
        stats.Should().BeEquivalentTo(new { Received = 1, Completed = 1, Abandoned = 0, AbandonedAtStop = 0, LeasesLost = 0, InFlight = 0 });
    }

    /// <summary>Starts a pump on one message whose handler takes <paramref name="handlerTime"/>, and stops it 1 s later.</summary>
    private static (MessagePumpStatistics Stats, TimeSpan StoppedAfter, bool HandlerCanceled, ListLogger Logger) StopWhileAHandlerRuns(TimeSpan shutdownTimeout, TimeSpan handlerTime)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(new byte[] { 1 }, "m1");
        MessagePumpStatistics? stats = null;
        var stoppedAfter = TimeSpan.MinValue;
        var canceled = false;
        var logger = new ListLogger();
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, token) =>
                {
                    using var registration = token.Register(() => canceled = true);
                    await Task.Delay(handlerTime, context.TimeProvider, token);
                },
                scheduler,
                new MessagePumpOptions { ShutdownTimeout = shutdownTimeout },
                logger);
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
            var start = clock.GetUtcNow();
            await pump.StopAsync();
            stoppedAfter = clock.GetUtcNow() - start;
            stats = pump.GetStatistics();
        });

        stats!.ShouldBeConsistent();
        stats.ShouldMatch(queue.GetStatistics());
        queue.GetStatistics().InFlight.Should().Be(0, "nothing stays locked");
        return (stats, stoppedAfter, canceled, logger);
    }
}
