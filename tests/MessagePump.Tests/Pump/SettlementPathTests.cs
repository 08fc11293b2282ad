using PriorityAsync.MessagePump.Tests.Transport;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// A settlement made on the leased message itself (<see cref="MessageContext.Message"/>) goes through the pump's
/// settlement: counted once as what it was, never settled again when the handler returns. Virtual time, one thread.
/// </summary>
public class SettlementPathTests
{
    [Theory]
    [InlineData("complete")]
    [InlineData("abandon")]
    [InlineData("dead-letter")]
    public void ASettlementOnTheMessageItself_IsCountedAsWhatItWas_AndTheMessageIsNotSettledAgain(string settlement)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(new byte[] { 1 }, "m1");
        var logger = new ListLogger();
        var states = new List<MessageLeaseState>();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, _) =>
                {
                    if (context.Message.DeliveryCount > 1)
                    {
                        return; // the redelivery after the abandon: completed
                    }

                    await (settlement switch
                    {
                        "complete" => context.Message.CompleteAsync(),
                        "abandon" => context.Message.AbandonAsync(),
                        _ => context.Message.DeadLetterAsync("poison"),
                    });
                    states.Add(context.LeaseState);
                },
                scheduler,
                logger: logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed + queue.GetStatistics().DeadLettered == 1, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        states.Should().Equal(MessageLeaseState.SettlementClaimed);
        stats.Should().BeEquivalentTo(new
        {
            Received = settlement == "abandon" ? 2 : 1,
            Completed = settlement == "dead-letter" ? 0 : 1,
            Abandoned = settlement == "abandon" ? 1 : 0,
            DeadLettered = settlement == "dead-letter" ? 1 : 0,
            LeasesLost = 0,
            SettleFailures = 0,
        });
        logger.Entries.Should().NotContain(e => e.Level >= Microsoft.Extensions.Logging.LogLevel.Error);
        queue.GetStatistics().Should().BeEquivalentTo(new { InFlight = 0, LeasesLost = 0 });
    }

    [Fact]
    public void ASettlementOnTheMessage_AfterThePumpSettledIt_ThrowsLeaseLost_AndChangesNoCount()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(new byte[] { 1 }, "m1");
        Exception? late = null;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, _) =>
                {
                    (await context.DeadLetterAsync("poison", "described")).Should().BeTrue();
                    late = await Record(() => context.Message.CompleteAsync());
                },
                scheduler);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => late is not null, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        late.Should().BeOfType<LeaseLostException>().Which.Message.Should().Contain("already settled");
        stats.Should().BeEquivalentTo(new { Received = 1, Completed = 0, DeadLettered = 1, LeasesLost = 0, SettleFailures = 0 });
        queue.GetDeadLetters().Should().ContainSingle().Which.Reason.Should().Be("poison");
    }

    /// <summary>
    /// A settle call on the message that the broker refuses reaches the handler as the transport's own exception, and the
    /// pump counts it once: a lost lease as lost (log event 22), any other failure as a settle failure (event 23).
    /// </summary>
    [Theory]
    [InlineData("lost")]
    [InlineData("refused")]
    public void ASettlementOnTheMessage_ThatTheBrokerRefuses_ThrowsToTheHandler_AndIsCountedOnce(string answer)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(new byte[] { 1 }, "m1");
        Exception refusal = answer == "lost" ? new LeaseLostException("gone") : new InvalidOperationException("refused");
        var source = new RefusingSource(queue, refusal);
        var logger = new ListLogger();
        Exception? thrown = null;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                source,
                async (context, _) => thrown = await Record(() => context.Message.CompleteAsync()),
                scheduler,
                new MessagePumpOptions { ShutdownTimeout = TimeSpan.FromSeconds(1) },
                logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => thrown is not null, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        if (answer == "lost")
        {
            thrown.Should().BeOfType<LeaseLostException>().Which.Message.Should().Contain("lease was lost");
        }
        else
        {
            thrown.Should().BeSameAs(refusal);
        }

        source.DirectCalls.Should().Be(1, "the message's own call was sent once, by the pump, and not again after the handler");
        stats.Should().BeEquivalentTo(new
        {
            Received = 1,
            Completed = 0,
            LeasesLost = answer == "lost" ? 1 : 0,
            SettleFailures = answer == "lost" ? 0 : 1,
        });
        logger.Entries.Count(e => e.EventId.Id == (answer == "lost" ? 22 : 23)).Should().Be(1);
    }

    private static async Task<Exception?> Record(Func<Task> call)
    {
        try
        {
            await call();
            return new InvalidOperationException("no exception");
        }
        catch (Exception ex)
        {
            return ex;
        }
    }

    /// <summary>Hands out its queue's messages as <see cref="RefusedMessage"/>s, whose settle calls the broker refuses with one answer.</summary>
    private sealed class RefusingSource(InMemoryQueue inner, Exception refusal) : IMessageSource
    {
        private int _directCalls;

        public Exception Refusal => refusal;

        public int DirectCalls => Volatile.Read(ref _directCalls);

        public TimeSpan? LockDuration => ((IMessageSource)inner).LockDuration;

        public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            await inner.ReceiveAsync(cancellationToken) is { } message ? new RefusedMessage(message, this) : null;

        /// <summary>A message of a shipped transport's shape (<see cref="ISettleableMessage"/>) whose broker refuses every settlement.</summary>
        private sealed class RefusedMessage(ILeasedMessage inner, RefusingSource source) : WrappedSettleableMessage(inner)
        {
            public override Task<SettlementOutcome> SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default)
            {
                Interlocked.Increment(ref source._directCalls);
                return Task.FromException<SettlementOutcome>(source.Refusal);
            }
        }
    }
}
