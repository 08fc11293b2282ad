using Azure.Core.Amqp;
using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Time.Testing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>The README's dialect, "Sender links": sends to a queue or topic, single and batched, the size limit, whole bodies.</summary>
[Trait("Conformance", "SenderLinks")]
public sealed class ConformanceSenderLinks
{
    private static readonly ServiceBusTestEntityOptions Sessions = new() { RequiresSession = true, LockDuration = TimeSpan.FromSeconds(30) };

    [Fact]
    public async Task A_single_message_is_settled_accepted_and_enqueued()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("single");
        await using var sender = harness.Client.CreateSender("single");

        await sender.SendMessageAsync(new ServiceBusMessage("one") { MessageId = "one" });

        queue.ActiveCount.Should().Be(1, "the send returned: the broker settled the transfer accepted after enqueuing it");
    }

    [Fact]
    public async Task A_batch_sent_as_one_transfer_arrives_as_its_messages_in_order()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("batch");
        await using var sender = harness.Client.CreateSender("batch");
        using var batch = await sender.CreateMessageBatchAsync();
        for (var i = 0; i < 5; i++)
        {
            batch.TryAddMessage(new ServiceBusMessage($"body-{i}") { MessageId = $"b{i}" }).Should().BeTrue();
        }

        await sender.SendMessagesAsync(batch);
        queue.ActiveCount.Should().Be(5);

        await using var receiver = harness.Client.CreateReceiver("batch");
        var received = await Receive.ExactlyAsync(receiver, 5);

        received.Select(m => m.MessageId).Should().Equal("b0", "b1", "b2", "b3", "b4");
        received.Select(m => m.Body.ToString()).Should().Equal("body-0", "body-1", "body-2", "body-3", "body-4");
        received.Select(m => m.SequenceNumber).Should().BeInAscendingOrder();
        received.Select(m => m.LockToken).Should().OnlyHaveUniqueItems();
        foreach (var message in received)
        {
            await receiver.CompleteMessageAsync(message);
        }

        queue.CompletedCount.Should().Be(5);
    }

    [Fact]
    public async Task A_topic_fans_out_to_each_subscription()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var topic = harness.Broker.CreateTopic("events");
        var first = topic.CreateSubscription("first");
        var second = topic.CreateSubscription("second");
        await using var sender = harness.Client.CreateSender("events");
        await sender.SendMessageAsync(new ServiceBusMessage("e") { MessageId = "e1" });

        harness.Broker.GetQueue("events/Subscriptions/first").Should().BeSameAs(first);
        await using var firstReceiver = harness.Client.CreateReceiver("events", "first");
        await using var secondReceiver = harness.Client.CreateReceiver("events", "second");
        var fromFirst = await Receive.OneAsync(firstReceiver);
        var fromSecond = await Receive.OneAsync(secondReceiver);
        await firstReceiver.CompleteMessageAsync(fromFirst);
        await secondReceiver.CompleteMessageAsync(fromSecond);

        fromFirst.MessageId.Should().Be("e1");
        fromSecond.MessageId.Should().Be("e1");
        first.CompletionsOf("e1").Should().Be(1);
        second.CompletionsOf("e1").Should().Be(1);
    }

    [Fact]
    public async Task A_body_of_several_data_sections_arrives_whole_and_in_order()
    {
        await using var harness = await BrokerHarness.StartAsync();
        harness.Broker.CreateQueue("sections");
        await using var sender = harness.Client.CreateSender("sections");
        var body = AmqpMessageBody.FromData([new byte[] { 1, 2, 3 }, new byte[] { 4, 5, 6, 7 }]);
        await sender.SendMessageAsync(new ServiceBusMessage(new AmqpAnnotatedMessage(body)) { MessageId = "m" });
        await using var receiver = harness.Client.CreateReceiver("sections");

        var received = await Receive.OneAsync(receiver);

        received.GetRawAmqpMessage().Body.TryGetData(out var sections).Should().BeTrue();
        sections!.Select(s => s.ToArray()).Should().BeEquivalentTo(new[] { new byte[] { 1, 2, 3 }, new byte[] { 4, 5, 6, 7 } }, o => o.WithStrictOrdering());
    }

    [Fact]
    public async Task A_message_over_the_standard_tiers_256_KB_is_refused_unless_the_premium_limit_is_set()
    {
        var payload = new byte[300 * 1024];
        await using (var standard = await ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { TimeProvider = new FakeTimeProvider(DateTimeOffset.UtcNow) }))
        {
            var queue = standard.CreateQueue("big");
            await using var client = new ServiceBusClient(standard.ConnectionString, BrokerHarness.ClientOptions(maxRetries: 0));
            await using var sender = client.CreateSender("big");

            var send = () => sender.SendMessageAsync(new ServiceBusMessage(payload));

            (await send.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageSizeExceeded);
            queue.ActiveCount.Should().Be(0);
        }

        await using var premium = await ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions
        {
            TimeProvider = new FakeTimeProvider(DateTimeOffset.UtcNow),
            MaxMessageSizeInBytes = 1024 * 1024,
        });
        var premiumQueue = premium.CreateQueue("big");
        await using var premiumClient = new ServiceBusClient(premium.ConnectionString, BrokerHarness.ClientOptions(maxRetries: 0));
        await using var premiumSender = premiumClient.CreateSender("big");
        await premiumSender.SendMessageAsync(new ServiceBusMessage(payload));
        premiumQueue.ActiveCount.Should().Be(1);
    }

    [Fact]
    public async Task A_session_entity_refuses_a_message_without_a_session_id()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("strict", Sessions);
        await using var sender = harness.Client.CreateSender("strict");

        var send = () => sender.SendMessageAsync(new ServiceBusMessage("x"));

        await send.Should().ThrowAsync<Exception>();
        queue.ActiveCount.Should().Be(0);
        FluentActions.Invoking(() => queue.Send("x"u8.ToArray())).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("sessionId");
    }
}
