using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>Entities that appear after a client started using them, and entities deleted under it, answered as the service does.</summary>
public sealed class EntityTests
{
    [Fact]
    public async Task A_receive_from_a_queue_not_yet_created_fails_with_entity_not_found_and_the_same_receiver_works_once_it_is()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        await using var receiver = harness.Client.CreateReceiver("late");

        var missing = () => receiver.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(100));
        (await missing.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessagingEntityNotFound);

        var queue = harness.Broker.CreateQueue("late");
        queue.Send("x"u8.ToArray(), "x");
        var message = await Receive.OneAsync(receiver); // the SDK attaches the link again
        await receiver.CompleteMessageAsync(message);

        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task A_deleted_queue_detaches_its_receivers_with_entity_not_found_refuses_sends_and_can_be_created_again()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var before = harness.Broker.CreateQueue("orders");
        before.Send("a"u8.ToArray(), "a");
        await using var receiver = harness.Client.CreateReceiver("orders");
        await using var sender = harness.Client.CreateSender("orders");
        await receiver.CompleteMessageAsync(await Receive.OneAsync(receiver)); // the receive link is open

        await harness.Broker.DeleteQueueAsync("orders");

        var receive = () => receiver.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(100));
        (await receive.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessagingEntityNotFound);
        var send = () => sender.SendMessageAsync(new ServiceBusMessage("b"));
        (await send.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessagingEntityNotFound);
        harness.Broker.Invoking(b => b.GetQueue("orders")).Should().Throw<ArgumentException>();
        harness.Broker.Invoking(b => b.GetQueue("orders/$DeadLetterQueue")).Should().Throw<ArgumentException>();

        var after = harness.Broker.CreateQueue("orders");
        after.Send("c"u8.ToArray(), "c");
        var message = await Receive.OneAsync(receiver);
        message.MessageId.Should().Be("c");
        await receiver.CompleteMessageAsync(message);
        after.CompletionsOf("c").Should().Be(1);
        after.CompletedCount.Should().Be(1, "the queue created again starts empty");
    }

    [Fact]
    public async Task Only_a_queue_can_be_deleted_naming_the_argument()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateQueue("orders");
        harness.Broker.CreateTopic("events").CreateSubscription("audit");

        foreach (var name in new[] { "nowhere", "orders/$DeadLetterQueue", "events", "events/Subscriptions/audit" })
        {
            (await harness.Broker.Invoking(b => b.DeleteQueueAsync(name)).Should().ThrowAsync<ArgumentException>()).Which.ParamName.Should().Be("name");
        }

        await harness.Broker.Invoking(b => b.DeleteQueueAsync(" ")).Should().ThrowAsync<ArgumentException>();
        harness.Broker.GetQueue("events/Subscriptions/audit").Should().NotBeNull();
    }
}
