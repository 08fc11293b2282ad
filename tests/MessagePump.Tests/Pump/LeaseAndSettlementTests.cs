namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>How the lease keeper, the settlement and the stop path share one delivery. Virtual time, one thread.</summary>
public class LeaseAndSettlementTests
{
    [Fact]
    public void ARenewFailingTransiently_IsRetried_EvenWithTheShortestRetryDelay()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 1 }, "m1");
        var source = new ScriptedSource(queue) { RenewFault = (_, call) => call == 0 ? new TransientTransportException("busy") : null };
        DateTimeOffset started = default;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var options = new MessagePumpOptions { LeaseKeeper = new() { TransientRetryDelay = TimeSpan.FromMilliseconds(1) } };
            var pump = new PriorityMessagePump(
                source,
                (context, token) =>
                {
                    started = context.TimeProvider.GetUtcNow();
                    return Task.Delay(TimeSpan.FromSeconds(7), context.TimeProvider, token);
                },
                scheduler,
                options);
            options.LeaseKeeper.TransientRetryDelay = TimeSpan.FromSeconds(2); // the pump copied its keeper's options
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        source.Renewals.Select(r => r.At - started).Should().Equal(TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(5) + TimeSpan.FromMilliseconds(1));
        stats.Should().BeEquivalentTo(new { Received = 1, Completed = 1, Renewals = 1, TransientRetries = 1, LeasesLost = 0 });
    }

    /// <summary>
    /// No renewal goes out once the settlement has begun: the renewal due at 5 s, while the complete sent at 4 s is
    /// under way, is not sent (it would have found the lease gone), and the outcome is the complete's, which succeeds.
    /// </summary>
    [Fact]
    public void NoRenewalIsSent_WhileTheCompleteIsUnderWay_TheOutcomeIsTheComplete()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 1 }, "m1");
        var source = new ScriptedSource(queue)
        {
            SettleLatency = TimeSpan.FromSeconds(2), // the complete sent at 4 s reaches the queue at 6 s
            RenewFault = (_, _) => new LeaseLostException("gone"), // the renewal at 5 s
        };
        var logger = new ListLogger();
        var canceled = false;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                source,
                async (context, token) =>
                {
                    using var registration = token.Register(() => canceled = true);
                    await Task.Delay(TimeSpan.FromSeconds(4), context.TimeProvider, token);
                },
                scheduler,
                logger: logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        source.Renewals.Should().BeEmpty("the renewal due at 5 s comes after the settlement began at 4 s");
        stats.Should().BeEquivalentTo(new { Received = 1, Completed = 1, LeasesLost = 0, Renewals = 0 });
        canceled.Should().BeFalse();
        logger.Entries.Should().NotContain(e => e.EventId.Id == 22);
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 0, InFlight = 0 });
    }

    /// <summary>
    /// A delivery whose settlement has ended (a dead-letter by its handler, or a lease the keeper lost) has nothing
    /// left for the stop path to wait for, even while its handler ignores its token: the stop returns after the
    /// shutdown wait, and nothing is reported unsettled.
    /// </summary>
    [Theory]
    [InlineData("dead-letter")]
    [InlineData("lease lost")]
    public void Stop_WithTheSettlementOver_ButTheHandlerStillRunning_ReturnsAfterTheShutdownWait(string ending)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(new byte[] { 1 }, "m1");
        var source = new ScriptedSource(queue);
        if (ending == "lease lost")
        {
            source.RenewFault = (_, _) => new LeaseLostException("gone"); // the renewal at 20 s
        }

        var logger = new ListLogger();
        var stoppedAfter = TimeSpan.MinValue;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                source,
                async (context, _) =>
                {
                    if (ending == "dead-letter")
                    {
                        (await context.DeadLetterAsync("poison")).Should().BeTrue();
                    }

                    await Task.Delay(TimeSpan.FromMinutes(10), context.TimeProvider); // ignores its token
                },
                scheduler,
                new MessagePumpOptions { ShutdownTimeout = TimeSpan.FromSeconds(1) },
                logger);
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(21), scheduler.TimeProvider);
            var start = clock.GetUtcNow();
            await pump.StopAsync();
            stoppedAfter = clock.GetUtcNow() - start;
            stats = pump.GetStatistics();
        });

        stoppedAfter.Should().Be(TimeSpan.FromSeconds(1));
        stats.Should().BeEquivalentTo(new
        {
            Received = 1,
            DeadLettered = ending == "dead-letter" ? 1 : 0,
            LeasesLost = ending == "lease lost" ? 1 : 0,
            UnsettledAtStop = 0,
            AbandonedAtStop = 0,
            InFlight = 0,
        });
        logger.Entries.Should().NotContain(e => e.EventId.Id == 32 || e.EventId.Id == 30);
        if (ending == "lease lost")
        {
            logger.Entries.Where(e => e.EventId.Id == 22).Should().ContainSingle().Which.Message.Should().Contain("lost the lease of m1 during renew;");
        }
    }
}
