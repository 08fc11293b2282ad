using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

public sealed class SendReceiveTests
{
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
    public async Task Sending_to_an_unknown_entity_fails_with_entity_not_found()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        await using var sender = harness.Client.CreateSender("nowhere");

        var send = () => sender.SendMessageAsync(new ServiceBusMessage("x"));

        (await send.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessagingEntityNotFound);
    }
}
