namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>What a handler sees of its message and pump: the lease's state, how the context and pump describe themselves, and dead-lettering's argument check.</summary>
public class MessageContextTests
{
    [Fact]
    public void Context_DescribesTheDeliveryAndItsLease_AsTheLeaseMovesOn()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 1 }, "m1");
        var seen = new List<(string Text, MessageLeaseState State)>();
        string? pumpText = null;
        var logger = new ListLogger();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, _) =>
                {
                    seen.Add((context.ToString(), context.LeaseState));
                    var blank = () => context.DeadLetterAsync(" ");
                    await blank.Should().ThrowAsync<ArgumentException>().WithParameterName("reason");
                    var blankWithDescription = () => context.DeadLetterAsync("", "described");
                    await blankWithDescription.Should().ThrowAsync<ArgumentException>().WithParameterName("reason");
                    seen.Add((context.ToString(), context.LeaseState));
                    (await context.DeadLetterAsync("poison")).Should().BeTrue();
                    seen.Add((context.ToString(), context.LeaseState));
                },
                scheduler,
                new MessagePumpOptions { Name = "orders" },
                logger);
            pumpText = pump.ToString();
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().DeadLettered == 1, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        pumpText.Should().Be("PriorityMessagePump 'orders'");
        seen.Should().Equal(
            ("m1 (delivery 1, Held)", MessageLeaseState.Held),
            ("m1 (delivery 1, Held)", MessageLeaseState.Held),
            ("m1 (delivery 1, SettlementClaimed)", MessageLeaseState.SettlementClaimed));
        stats.Should().BeEquivalentTo(new { Received = 1, DeadLettered = 1, Completed = 0, SettleFailures = 0 });
        queue.GetDeadLetters().Should().Equal(new InMemoryDeadLetter("m1", "poison", 1));
        logger.Entries.Where(e => e.EventId.Id == 14).Should().ContainSingle().Which.Message.Should().Be("Message pump orders dead-lettered m1: poison.");
    }

    [Fact]
    public void Context_OfALostLease_SaysSo()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10), RenewFailureRate = 1, MaxDeliveryCount = 1 });
        queue.Send(new byte[] { 1 }, "m1");
        string? text = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                queue,
                async (context, token) =>
                {
                    try
                    {
                        await Task.Delay(TimeSpan.FromMinutes(1), context.TimeProvider, token);
                    }
                    catch (OperationCanceledException)
                    {
                        text = context.ToString();
                    }
                },
                scheduler);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => text is not null, clock, TimeSpan.FromMinutes(5));
            await pump.StopAsync();
        });

        text.Should().Be("m1 (delivery 1, Lost)");
    }
}
