using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>The README's dialect, "Time-to-live": the message's own, the entity's default, expiry on the broker's clock, dead-lettering on expiry.</summary>
[Trait("Conformance", "TimeToLive")]
public sealed class ConformanceTimeToLive
{
    [Fact]
    public async Task A_message_TimeToLive_counts_from_its_enqueue_time_on_the_broker_clock()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateQueue("ttl");
        harness.Clock.Advance(TimeSpan.FromHours(1)); // the broker's clock is now an hour ahead of the client's
        await using var sender = harness.Client.CreateSender("ttl");
        await sender.SendMessageAsync(new ServiceBusMessage("x") { MessageId = "m", TimeToLive = TimeSpan.FromMinutes(5) });
        await using var receiver = harness.Client.CreateReceiver("ttl");

        var message = await Receive.OneAsync(receiver);

        message.EnqueuedTime.Should().Be(harness.Clock.GetUtcNow());
        message.TimeToLive.Should().Be(TimeSpan.FromMinutes(5));
        message.ExpiresAt.Should().Be(message.EnqueuedTime + TimeSpan.FromMinutes(5));
    }

    [Fact]
    public async Task The_entity_default_applies_to_a_message_without_one_and_caps_a_longer_one()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateQueue("ttl-default", new ServiceBusTestEntityOptions { DefaultMessageTimeToLive = TimeSpan.FromMinutes(1) });
        await using var sender = harness.Client.CreateSender("ttl-default");
        await sender.SendMessageAsync(new ServiceBusMessage("a") { MessageId = "none" });
        await sender.SendMessageAsync(new ServiceBusMessage("b") { MessageId = "longer", TimeToLive = TimeSpan.FromHours(1) });
        await sender.SendMessageAsync(new ServiceBusMessage("c") { MessageId = "shorter", TimeToLive = TimeSpan.FromSeconds(10) });
        await using var receiver = harness.Client.CreateReceiver("ttl-default");

        var messages = await Receive.ExactlyAsync(receiver, 3);

        messages.Select(m => m.ExpiresAt - m.EnqueuedTime).Should().Equal(TimeSpan.FromMinutes(1), TimeSpan.FromMinutes(1), TimeSpan.FromSeconds(10));
    }

    [Fact]
    public async Task An_expired_message_is_never_delivered_and_not_counted_as_active()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("ttl-drop");
        await using var sender = harness.Client.CreateSender("ttl-drop");
        await sender.SendMessageAsync(new ServiceBusMessage("old") { MessageId = "old", TimeToLive = TimeSpan.FromSeconds(30) });
        await sender.SendMessageAsync(new ServiceBusMessage("new") { MessageId = "new" });
        queue.ActiveCount.Should().Be(2);

        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        await using var receiver = harness.Client.CreateReceiver("ttl-drop");
        var received = await Receive.OneAsync(receiver);
        var more = await receiver.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(200));

        received.MessageId.Should().Be("new");
        more.Should().BeEmpty();
        queue.ActiveCount.Should().Be(0);
        queue.DeadLetterCount.Should().Be(0, "the queue does not dead-letter on expiry");
    }

    [Fact]
    public async Task An_expired_message_moves_to_the_dead_letter_queue_when_the_entity_asks_for_it()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("ttl-dlq", new ServiceBusTestEntityOptions { DeadLetteringOnMessageExpiration = true });
        queue.Send("x"u8.ToArray(), messageId: "never-read");
        await using var sender = harness.Client.CreateSender("ttl-dlq");
        await sender.SendMessageAsync(new ServiceBusMessage("x") { MessageId = "expires", TimeToLive = TimeSpan.FromSeconds(5) });

        harness.Clock.Advance(TimeSpan.FromSeconds(5));

        queue.ActiveCount.Should().Be(1);
        queue.DeadLetters.Should().ContainSingle().Which.Reason.Should().Be("TTLExpiredException");
        await using var deadLetters = harness.Client.CreateReceiver("ttl-dlq", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Receive.OneAsync(deadLetters);
        dead.MessageId.Should().Be("expires");
        dead.DeadLetterReason.Should().Be("TTLExpiredException");
        dead.DeadLetterSource.Should().Be("ttl-dlq");
        await deadLetters.AbandonMessageAsync(dead);
        harness.Clock.Advance(TimeSpan.FromDays(1));
        queue.DeadLetterQueue!.ActiveCount.Should().Be(1, "messages in a dead-letter sub-queue do not expire");
    }

    [Fact]
    public async Task A_scheduled_message_lives_from_its_scheduled_time()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateQueue("ttl-scheduled");
        await using var sender = harness.Client.CreateSender("ttl-scheduled");
        var at = harness.Clock.GetUtcNow() + TimeSpan.FromMinutes(5);
        await sender.SendMessageAsync(new ServiceBusMessage("x") { MessageId = "s", ScheduledEnqueueTime = at, TimeToLive = TimeSpan.FromMinutes(1) });

        harness.Clock.Advance(TimeSpan.FromMinutes(5));
        await using var receiver = harness.Client.CreateReceiver("ttl-scheduled");
        var message = await Receive.OneAsync(receiver);

        message.ExpiresAt.Should().Be(at + TimeSpan.FromMinutes(1));
    }

    [Fact]
    public async Task A_locked_message_that_expired_is_judged_when_it_comes_back()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("ttl-locked", new ServiceBusTestEntityOptions { DeadLetteringOnMessageExpiration = true });
        await using var sender = harness.Client.CreateSender("ttl-locked");
        await sender.SendMessageAsync(new ServiceBusMessage("x") { MessageId = "held", TimeToLive = TimeSpan.FromSeconds(10) });
        await using var receiver = harness.Client.CreateReceiver("ttl-locked");
        var held = await Receive.OneAsync(receiver);

        harness.Clock.Advance(TimeSpan.FromSeconds(20));
        queue.LockedCount.Should().Be(1, "the lock (60 s) still holds the expired message");
        await receiver.AbandonMessageAsync(held);

        queue.LockedCount.Should().Be(0);
        queue.ActiveCount.Should().Be(0);
        queue.DeadLetters.Should().ContainSingle().Which.Reason.Should().Be("TTLExpiredException");
    }

    [Fact]
    public async Task A_message_that_expired_while_locked_is_not_redelivered_to_a_receiver_with_credit()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("ttl-credit");
        await using var sender = harness.Client.CreateSender("ttl-credit");
        await sender.SendMessageAsync(new ServiceBusMessage("x") { MessageId = "held", TimeToLive = TimeSpan.FromSeconds(10) });
        await using var receiver = harness.Client.CreateReceiver("ttl-credit", new ServiceBusReceiverOptions { PrefetchCount = 10 });
        var held = await Receive.OneAsync(receiver);

        harness.Clock.Advance(TimeSpan.FromSeconds(20));
        await receiver.AbandonMessageAsync(held);
        var again = await receiver.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(200));

        again.Should().BeEmpty("the abandoned message had expired; the prefetch credit must not bring it back");
        queue.ActiveCount.Should().Be(0);
    }
}
