using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// The README's dialect, "propertiesToModify": abandon, defer and dead-letter, over the link or over $management, set
/// the message's application properties, each value with its AMQP type.
/// </summary>
[Trait("Conformance", "PropertiesToModify")]
public sealed class ConformancePropertiesToModify
{
    [Fact]
    public async Task Properties_to_modify_keep_each_value_with_its_AMQP_type_on_abandon_and_dead_letter()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("typed-properties");
        queue.Send("x"u8.ToArray(), messageId: "x");
        queue.Send("y"u8.ToArray(), messageId: "y");
        await using var receiver = harness.Client.CreateReceiver("typed-properties");
        var messages = await Receive.ExactlyAsync(receiver, 2);
        var at = new DateTime(2026, 11, 28, 3, 0, 0, DateTimeKind.Utc);
        var properties = new Dictionary<string, object> { ["count"] = 5, ["flag"] = true, ["at"] = at, ["text"] = "t" };

        await receiver.DeadLetterMessageAsync(messages.Single(m => m.MessageId == "x"), properties);
        await receiver.AbandonMessageAsync(messages.Single(m => m.MessageId == "y"), properties);
        await using var deadLetters = harness.Client.CreateReceiver("typed-properties", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var deadLettered = await Receive.OneAsync(deadLetters);
        var abandoned = await Receive.OneAsync(receiver);

        foreach (var message in new[] { deadLettered, abandoned })
        {
            message.ApplicationProperties["count"].Should().Be(5);
            message.ApplicationProperties["flag"].Should().Be(true);
            message.ApplicationProperties["at"].Should().Be(at);
            message.ApplicationProperties["text"].Should().Be("t");
        }
    }

    [Fact]
    public async Task Properties_to_modify_on_abandon_and_dead_letter_change_the_application_properties()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("modify");
        queue.Send("x"u8.ToArray(), messageId: "m", applicationProperties: new Dictionary<string, object> { ["kept"] = "k", ["attempt"] = 0 });
        await using var receiver = harness.Client.CreateReceiver("modify");

        var first = await Receive.OneAsync(receiver);
        await receiver.AbandonMessageAsync(first, new Dictionary<string, object> { ["attempt"] = 1, ["last-error"] = "timeout" });
        var second = await Receive.OneAsync(receiver);
        await receiver.DeadLetterMessageAsync(second, new Dictionary<string, object> { ["attempt"] = 2 }, "Gave up", "after two attempts");

        second.ApplicationProperties["attempt"].Should().Be(1);
        second.ApplicationProperties["last-error"].Should().Be("timeout");
        second.ApplicationProperties["kept"].Should().Be("k");
        await using var deadLetters = harness.Client.CreateReceiver("modify", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Receive.OneAsync(deadLetters);
        dead.ApplicationProperties["attempt"].Should().Be(2);
        dead.DeadLetterReason.Should().Be("Gave up");
        dead.DeadLetterErrorDescription.Should().Be("after two attempts");
    }

    [Fact]
    public async Task Properties_to_modify_of_defer_and_of_a_settlement_over_management_set_the_application_properties()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("modify-deferred");
        queue.Send("x"u8.ToArray(), messageId: "m", applicationProperties: new Dictionary<string, object> { ["kept"] = "k" });
        await using var receiver = harness.Client.CreateReceiver("modify-deferred");
        var message = await Receive.OneAsync(receiver);

        await receiver.DeferMessageAsync(message, new Dictionary<string, object> { ["step"] = 1 });
        var deferred = await receiver.ReceiveDeferredMessageAsync(message.SequenceNumber);
        // A message received by sequence number is settled over $management (update-disposition, properties-to-modify).
        await receiver.DeadLetterMessageAsync(deferred, new Dictionary<string, object> { ["step"] = 2L, ["why"] = "done" });
        await using var deadLetters = harness.Client.CreateReceiver("modify-deferred", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Receive.OneAsync(deadLetters);

        deferred.ApplicationProperties["step"].Should().Be(1);
        deferred.ApplicationProperties["kept"].Should().Be("k");
        dead.ApplicationProperties["step"].Should().Be(2L);
        dead.ApplicationProperties["why"].Should().Be("done");
        dead.ApplicationProperties["kept"].Should().Be("k");
        queue.DeferredCount.Should().Be(0);
    }

    [Fact]
    public async Task A_dead_letter_reason_given_as_a_non_string_property_stays_an_application_property_and_sets_no_reason()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("typed-reason");
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("typed-reason");
        var message = await Receive.OneAsync(receiver);

        await receiver.DeadLetterMessageAsync(message, new Dictionary<string, object> { ["DeadLetterReason"] = 42 });

        await using var deadLetters = harness.Client.CreateReceiver("typed-reason", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Receive.OneAsync(deadLetters);
        dead.ApplicationProperties["DeadLetterReason"].Should().Be(42);
        dead.DeadLetterReason.Should().BeNull();
        queue.DeadLetters.Should().ContainSingle().Which.Reason.Should().BeNull();
    }
}
