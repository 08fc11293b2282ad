using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

public sealed class SendReceiveTests
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
    public async Task A_message_that_reaches_leftover_credit_while_no_receive_waits_is_released_uncounted_and_received_next()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("leftover");
        queue.Send("1"u8.ToArray(), messageId: "one");
        await using var receiver = harness.Client.CreateReceiver("leftover");
        // Ten credits, one message: nine stay on the link after the call returns.
        var first = await receiver.ReceiveMessagesAsync(10, TimeSpan.FromMilliseconds(200));
        first.Should().ContainSingle();

        // With prefetch 0 the client releases what arrives between calls; released is not a delivery.
        queue.Send("2"u8.ToArray(), messageId: "two");
        var second = await Receive.OneAsync(receiver);

        second.MessageId.Should().Be("two");
        second.DeliveryCount.Should().Be(1);
        queue.DeadLetterCount.Should().Be(0);
    }

    [Fact]
    public async Task Messages_enqueued_by_the_test_api_carry_session_and_application_properties()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("direct");
        var id = queue.Send("x"u8.ToArray(), applicationProperties: new Dictionary<string, object> { ["kind"] = "k" });

        await using var receiver = harness.Client.CreateReceiver("direct");
        var message = await Receive.OneAsync(receiver);

        message.MessageId.Should().Be(id);
        message.ApplicationProperties["kind"].Should().Be("k");
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
    public async Task Sending_to_an_unknown_entity_fails_with_entity_not_found()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        await using var sender = harness.Client.CreateSender("nowhere");

        var send = () => sender.SendMessageAsync(new ServiceBusMessage("x"));

        (await send.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessagingEntityNotFound);
    }
}
