using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// The README's dialect, "Dispositions": accepted = complete, modified = abandon, released = back uncounted, modified
/// undeliverable-here = defer, rejected with com.microsoft:dead-letter = dead-letter; an unknown or expired lock is
/// answered com.microsoft:message-lock-lost.
/// </summary>
[Trait("Conformance", "Dispositions")]
public sealed class ConformanceDispositions
{
    [Fact]
    public async Task Complete_abandon_and_defer_remove_the_message_redeliver_it_counted_and_set_it_aside()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("dispositions");
        queue.Send("c"u8.ToArray(), messageId: "complete");
        queue.Send("a"u8.ToArray(), messageId: "abandon");
        queue.Send("d"u8.ToArray(), messageId: "defer");
        await using var receiver = harness.Client.CreateReceiver("dispositions");
        var messages = (await Receive.ExactlyAsync(receiver, 3)).ToDictionary(m => m.MessageId);

        await receiver.CompleteMessageAsync(messages["complete"]);
        await receiver.AbandonMessageAsync(messages["abandon"]);
        await receiver.DeferMessageAsync(messages["defer"]);

        queue.CompletionsOf("complete").Should().Be(1);
        queue.DeferredCount.Should().Be(1);
        queue.LockedCount.Should().Be(0);
        var again = await Receive.OneAsync(receiver);
        again.MessageId.Should().Be("abandon", "the deferred message is not delivered again; the abandoned one is");
        again.DeliveryCount.Should().Be(2);
        (await receiver.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(100))).Should().BeEmpty();
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
    public async Task Dead_lettering_carries_the_reason_and_description()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("dlq");
        queue.Send("x"u8.ToArray(), messageId: "d");
        await using var receiver = harness.Client.CreateReceiver("dlq");
        var message = await Receive.OneAsync(receiver);

        await receiver.DeadLetterMessageAsync(message, "Unparseable", "field 'amount' is missing");

        var record = queue.DeadLetters.Should().ContainSingle().Subject;
        record.Reason.Should().Be("Unparseable");
        record.Description.Should().Be("field 'amount' is missing");
        queue.LockedCount.Should().Be(0);
        await using var deadLetters = harness.Client.CreateReceiver("dlq", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Receive.OneAsync(deadLetters);
        dead.DeadLetterReason.Should().Be("Unparseable");
        dead.DeadLetterErrorDescription.Should().Be("field 'amount' is missing");
        dead.Body.ToString().Should().Be("x");
    }

    [Fact]
    public async Task Dead_lettering_without_a_reason_leaves_DeadLetterReason_unset()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("no-reason");
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("no-reason");

        await receiver.DeadLetterMessageAsync(await Receive.OneAsync(receiver));

        queue.DeadLetters.Should().ContainSingle().Which.Reason.Should().BeNull();
        await using var deadLetters = harness.Client.CreateReceiver("no-reason", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Receive.OneAsync(deadLetters);
        dead.DeadLetterReason.Should().BeNull();
        dead.ApplicationProperties.Should().NotContainKey("DeadLetterReason");
    }

    [Fact]
    public async Task Settling_an_unknown_or_expired_lock_is_answered_message_lock_lost()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("lost", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("lost");
        var message = await Receive.OneAsync(receiver);
        harness.Clock.Advance(TimeSpan.FromSeconds(10));

        foreach (var settle in new Func<Task>[]
        {
            () => receiver.CompleteMessageAsync(message),
            () => receiver.AbandonMessageAsync(message),
            () => receiver.DeferMessageAsync(message),
            () => receiver.DeadLetterMessageAsync(message, "late"),
        })
        {
            (await settle.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        }

        queue.ActiveCount.Should().Be(1, "nothing was settled");
        queue.DeadLetterCount.Should().Be(0);
        queue.CompletedCount.Should().Be(0);
    }
}
