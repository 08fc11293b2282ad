using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

public sealed class SendReceiveTests
{
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
