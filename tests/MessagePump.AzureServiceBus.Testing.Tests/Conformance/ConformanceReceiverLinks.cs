using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// The README's dialect, "Receiver links": peek-lock and its message annotations, ReceiveAndDelete, credit and drain,
/// on a queue, a subscription or a dead-letter sub-queue.
/// </summary>
[Trait("Conformance", "ReceiverLinks")]
public sealed class ConformanceReceiverLinks
{
    [Fact]
    public async Task A_message_sent_by_the_sdk_is_received_and_completed_once()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("orders");
        await using var sender = harness.Client.CreateSender("orders");
        await sender.SendMessageAsync(new ServiceBusMessage("hello")
        {
            MessageId = "m1",
            Subject = "greeting",
            ContentType = "text/plain",
            CorrelationId = "c1",
            ApplicationProperties = { ["tenant"] = "t1", ["attempt"] = 3 },
        });

        await using var receiver = harness.Client.CreateReceiver("orders");
        var message = await Receive.OneAsync(receiver);

        message.MessageId.Should().Be("m1");
        message.Body.ToString().Should().Be("hello");
        message.Subject.Should().Be("greeting");
        message.ContentType.Should().Be("text/plain");
        message.CorrelationId.Should().Be("c1");
        message.ApplicationProperties["tenant"].Should().Be("t1");
        message.ApplicationProperties["attempt"].Should().Be(3);
        message.DeliveryCount.Should().Be(1);
        message.SequenceNumber.Should().BePositive();
        message.EnqueuedTime.Should().Be(harness.Clock.GetUtcNow());
        message.LockedUntil.Should().Be(harness.Clock.GetUtcNow() + queue.LockDuration);
        queue.LockedCount.Should().Be(1);

        await receiver.CompleteMessageAsync(message);

        queue.CompletionsOf("m1").Should().Be(1);
        queue.CompletedCount.Should().Be(1);
        queue.ActiveCount.Should().Be(0);
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_receive_on_an_empty_queue_returns_nothing_after_its_wait_and_the_next_message_still_arrives()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("empty");
        await using var receiver = harness.Client.CreateReceiver("empty");

        var nothing = await receiver.ReceiveMessagesAsync(10, TimeSpan.FromMilliseconds(200));
        nothing.Should().BeEmpty();

        queue.Send("later"u8.ToArray(), messageId: "late");
        var message = await Receive.OneAsync(receiver);

        message.MessageId.Should().Be("late");
        message.Body.ToString().Should().Be("later");
        await receiver.CompleteMessageAsync(message);
        queue.CompletionsOf("late").Should().Be(1);
    }

    [Fact]
    public async Task ReceiveAndDelete_removes_the_message_as_it_is_delivered()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("rad");
        queue.Send("a"u8.ToArray(), messageId: "a");
        await using var receiver = harness.Client.CreateReceiver("rad", new ServiceBusReceiverOptions { ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete });

        var message = await Receive.OneAsync(receiver);

        message.MessageId.Should().Be("a");
        queue.ActiveCount.Should().Be(0);
        queue.LockedCount.Should().Be(0);
        queue.CompletionsOf("a").Should().Be(1);
    }

    [Fact]
    public async Task Deferred_and_scheduled_messages_carry_their_state()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateQueue("states");
        await using var sender = harness.Client.CreateSender("states");
        await sender.SendMessageAsync(new ServiceBusMessage("d") { MessageId = "d" });
        var scheduled = await sender.ScheduleMessageAsync(new ServiceBusMessage("s") { MessageId = "s" }, harness.Clock.GetUtcNow().AddMinutes(5));
        await using var receiver = harness.Client.CreateReceiver("states");
        var received = await Receive.OneAsync(receiver);
        received.State.Should().Be(ServiceBusMessageState.Active);
        await receiver.DeferMessageAsync(received);

        var peeked = await receiver.PeekMessagesAsync(10);
        var deferred = await receiver.ReceiveDeferredMessageAsync(received.SequenceNumber);

        peeked.Select(m => (m.MessageId, m.State)).Should().Equal(("d", ServiceBusMessageState.Deferred), ("s", ServiceBusMessageState.Scheduled));
        peeked[1].SequenceNumber.Should().Be(scheduled);
        deferred.State.Should().Be(ServiceBusMessageState.Deferred);
    }

    [Fact]
    public async Task Received_and_peeked_messages_carry_their_enqueue_sequence_number()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("enqueue-sequence");
        queue.Send("1"u8.ToArray(), messageId: "one");
        queue.Send("2"u8.ToArray(), messageId: "two");
        await using var receiver = harness.Client.CreateReceiver("enqueue-sequence");

        var peeked = await receiver.PeekMessagesAsync(10);
        var received = await Receive.ExactlyAsync(receiver, 2);

        peeked.Should().HaveCount(2).And.OnlyContain(m => m.EnqueuedSequenceNumber > 0 && m.EnqueuedSequenceNumber == m.SequenceNumber);
        received.Should().OnlyContain(m => m.EnqueuedSequenceNumber > 0 && m.EnqueuedSequenceNumber == m.SequenceNumber);
    }

    [Fact]
    public async Task A_receive_gets_no_more_messages_than_its_credit_and_the_rest_stay_available()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("credit");
        for (var i = 0; i < 5; i++)
        {
            queue.Send("x"u8.ToArray(), messageId: $"m{i}");
        }

        await using var receiver = harness.Client.CreateReceiver("credit");
        var received = await receiver.ReceiveMessagesAsync(2, BrokerHarness.HangBound);

        received.Should().HaveCountGreaterThan(0).And.HaveCountLessThanOrEqualTo(2);
        queue.LockedCount.Should().Be(received.Count, "the broker sends no more than the link's credit");
        queue.ActiveCount.Should().Be(5 - received.Count);
    }

    [Fact]
    public async Task A_subscription_and_a_dead_letter_sub_queue_are_read_and_a_dead_letter_carries_its_source()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateTopic("events").CreateSubscription("audit");
        await using var sender = harness.Client.CreateSender("events");
        await sender.SendMessageAsync(new ServiceBusMessage("e") { MessageId = "e" });
        await using var receiver = harness.Client.CreateReceiver("events", "audit");
        var message = await Receive.OneAsync(receiver);
        await receiver.DeadLetterMessageAsync(message, "Rejected", "by the test");

        await using var deadLetters = harness.Client.CreateReceiver("events", "audit", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Receive.OneAsync(deadLetters);

        dead.MessageId.Should().Be("e");
        dead.DeadLetterSource.Should().Be("events/Subscriptions/audit");
        await deadLetters.CompleteMessageAsync(dead);
        harness.Broker.GetQueue("events/Subscriptions/audit/$DeadLetterQueue").CompletionsOf("e").Should().Be(1);
    }
}
