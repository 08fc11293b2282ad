using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

public sealed class PeekAndScheduleTests
{
    [Fact]
    public async Task Peek_shows_available_and_locked_messages_in_order_without_locking_them()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("peek");
        queue.Send("1"u8.ToArray(), messageId: "one");
        queue.Send("2"u8.ToArray(), messageId: "two");
        queue.Send("3"u8.ToArray(), messageId: "three");
        await using var receiver = harness.Client.CreateReceiver("peek");
        var locked = await Receive.OneAsync(receiver);

        var peeked = await receiver.PeekMessagesAsync(10);
        var more = await receiver.PeekMessagesAsync(10);

        peeked.Select(m => m.MessageId).Should().Equal("one", "two", "three");
        peeked.Select(m => m.SequenceNumber).Should().BeInAscendingOrder();
        peeked[0].LockedUntil.Should().Be(locked.LockedUntil);
        more.Should().BeEmpty("the receiver peeks on from the last sequence number it saw");
        queue.LockedCount.Should().Be(1);
        queue.ActiveCount.Should().Be(2);
    }

    [Fact]
    public async Task A_message_scheduled_by_enqueue_time_arrives_when_the_broker_clock_reaches_it()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("scheduled");
        await using var sender = harness.Client.CreateSender("scheduled");
        var at = harness.Clock.GetUtcNow() + TimeSpan.FromMinutes(5);
        await sender.SendMessageAsync(new ServiceBusMessage("later") { MessageId = "later", ScheduledEnqueueTime = at });
        await using var receiver = harness.Client.CreateReceiver("scheduled");

        (await receiver.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(100))).Should().BeEmpty();
        queue.ScheduledCount.Should().Be(1);
        queue.ActiveCount.Should().Be(0);

        var waiting = receiver.ReceiveMessageAsync(BrokerHarness.HangBound);
        harness.Clock.Advance(TimeSpan.FromMinutes(5));
        var message = await waiting;

        message!.MessageId.Should().Be("later");
        message.EnqueuedTime.Should().Be(at);
        queue.ScheduledCount.Should().Be(0);
    }

    [Fact]
    public async Task ScheduleMessageAsync_returns_a_sequence_number_that_cancels_the_message()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("schedule-api");
        await using var sender = harness.Client.CreateSender("schedule-api");
        var at = harness.Clock.GetUtcNow() + TimeSpan.FromMinutes(1);

        var kept = await sender.ScheduleMessageAsync(new ServiceBusMessage("kept") { MessageId = "kept" }, at);
        var cancelled = await sender.ScheduleMessageAsync(new ServiceBusMessage("cancelled") { MessageId = "cancelled" }, at);
        await sender.CancelScheduledMessageAsync(cancelled);

        kept.Should().BePositive();
        queue.ScheduledCount.Should().Be(1);
        harness.Clock.Advance(TimeSpan.FromMinutes(1));
        await using var receiver = harness.Client.CreateReceiver("schedule-api");
        var message = await Receive.OneAsync(receiver);
        message.MessageId.Should().Be("kept");
        message.SequenceNumber.Should().Be(kept);
        queue.ActiveCount.Should().Be(0);
    }
}
