namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// A handler unit-tested without a pump: <see cref="MessagePumpModelFactory.MessageContext"/> makes the context, its
/// first settle call settles the message itself, later ones answer false, and the given token is the context's.
/// </summary>
public class MessagePumpModelFactoryTests
{
    // The handler under test: dead-letters an empty body with a description, completes anything else.
    private static async Task HandleOrderAsync(MessageContext context, CancellationToken cancellationToken)
    {
        if (context.Message.Body.Length == 0)
        {
            await context.DeadLetterAsync("EmptyBody", "an order needs a body");
            return;
        }

        await PriorityScheduler.YieldIfNeeded();
        await context.CompleteAsync();
    }

    [Fact]
    public async Task A_handler_settles_the_message_through_a_context_made_without_a_pump()
    {
        var queue = new InMemoryTransport().CreateQueue("orders");
        queue.Send(new byte[] { 1 }, "good");
        queue.Send(Array.Empty<byte>(), "empty");
        using var scheduler = new PriorityTaskScheduler();

        var good = MessagePumpModelFactory.MessageContext((await queue.ReceiveAsync())!, scheduler);
        var empty = MessagePumpModelFactory.MessageContext((await queue.ReceiveAsync())!, scheduler);
        good.LeaseState.Should().Be(MessageLeaseState.Held);
        var lane = scheduler.GetLane(LanePriority.Processing); // where a pump runs handlers: YieldIfNeeded needs a lane
        await lane.Run(() => HandleOrderAsync(good, CancellationToken.None));
        await lane.Run(() => HandleOrderAsync(empty, CancellationToken.None));

        good.LeaseState.Should().Be(MessageLeaseState.SettlementClaimed);
        empty.LeaseState.Should().Be(MessageLeaseState.SettlementClaimed);
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, DeadLettered = 1, InFlight = 0 });
        queue.GetDeadLetters().Should().ContainSingle().Which.MessageId.Should().Be("empty");
        (await good.AbandonAsync()).Should().BeFalse("a message is settled once, as with a pump");
        good.RenewalCount.Should().Be(0);
        good.ShouldYield.Should().BeFalse("nothing more urgent waits on this scheduler");
        good.TimeProvider.Should().BeSameAs(scheduler.TimeProvider);
    }

    [Fact]
    public async Task The_context_token_follows_the_given_token_and_a_lost_lease_answers_false()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send(new byte[] { 1 }, "m1");
        using var scheduler = new PriorityTaskScheduler();
        using var lost = new CancellationTokenSource();
        var context = MessagePumpModelFactory.MessageContext((await queue.ReceiveAsync())!, scheduler, clock, lost.Token);

        context.TimeProvider.Should().BeSameAs(clock);
        context.CancellationToken.IsCancellationRequested.Should().BeFalse();
        await lost.CancelAsync();
        context.CancellationToken.IsCancellationRequested.Should().BeTrue();

        clock.Advance(TimeSpan.FromSeconds(11)); // the lock runs out: nothing renews it without a pump
        (await context.CompleteAsync()).Should().BeFalse();
        queue.GetStatistics().Completed.Should().Be(0);
    }

    [Fact]
    public async Task Without_a_scheduler_the_context_never_asks_to_yield_and_runs_on_the_system_clock()
    {
        var queue = new InMemoryTransport().CreateQueue("orders");
        queue.Send(new byte[] { 1 }, "m1");
        var context = MessagePumpModelFactory.MessageContext((await queue.ReceiveAsync())!);
        context.ShouldYield.Should().BeFalse();
        context.TimeProvider.Should().BeSameAs(TimeProvider.System);
        (await context.CompleteAsync()).Should().BeTrue();
    }

    [Fact]
    public void Bad_input_is_named() =>
        FluentActions.Invoking(() => MessagePumpModelFactory.MessageContext(null!))
            .Should().Throw<ArgumentNullException>().WithParameterName("message");
}
