using Azure.Messaging.ServiceBus;

namespace MessagePump.AzureServiceBus.Testing.Tests;

public sealed class SendReceiveTests
{
    [Fact]
    public async Task A_message_sent_by_the_sdk_is_received_and_completed_once()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("orders");
        await using var sender = harness.Client.CreateSender("orders");
        await sender.SendMessageAsync(new ServiceBusMessage("hello") { MessageId = "m1", Subject = "greeting" });

        await using var receiver = harness.Client.CreateReceiver("orders");
        var message = await receiver.ReceiveMessageAsync(BrokerHarness.HangBound);

        message.Should().NotBeNull();
        message!.MessageId.Should().Be("m1");
        message.Body.ToString().Should().Be("hello");
        message.Subject.Should().Be("greeting");
        message.DeliveryCount.Should().Be(1);
        message.LockedUntil.Should().Be(harness.Clock.GetUtcNow() + queue.LockDuration);
        queue.LockedCount.Should().Be(1);

        await receiver.CompleteMessageAsync(message);

        queue.CompletionsOf("m1").Should().Be(1);
        queue.ActiveCount.Should().Be(0);
        queue.LockedCount.Should().Be(0);
    }
}
