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
}
