using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// The README's dialect, "Lock expiry and delivery count": an expired lock or an abandon counts a delivery; reaching
/// MaxDeliveryCount moves the message to the dead-letter sub-queue with reason MaxDeliveryCountExceeded.
/// </summary>
[Trait("Conformance", "LockExpiry")]
public sealed class ConformanceLockExpiry
{
    [Fact]
    public async Task An_expired_lock_redelivers_the_message_with_its_delivery_count_raised()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("expiry", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("expiry");
        var first = await Receive.OneAsync(receiver);

        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        queue.LockedCount.Should().Be(0);
        queue.ActiveCount.Should().Be(1);
        var second = await Receive.OneAsync(receiver);

        second.MessageId.Should().Be("x");
        second.DeliveryCount.Should().Be(2);
        second.LockToken.Should().NotBe(first.LockToken);
        var completeFirst = () => receiver.CompleteMessageAsync(first);
        (await completeFirst.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        await receiver.CompleteMessageAsync(second);
        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task A_receiver_waiting_for_messages_gets_one_whose_lock_expires_while_it_waits()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("wait", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var holder = harness.Client.CreateReceiver("wait");
        await using var waiter = harness.Client.CreateReceiver("wait");
        await Receive.OneAsync(holder);

        var waiting = waiter.ReceiveMessageAsync(BrokerHarness.HangBound);
        harness.Clock.Advance(TimeSpan.FromSeconds(10));
        var message = await waiting;

        message.Should().NotBeNull();
        message!.DeliveryCount.Should().Be(2);
        await waiter.CompleteMessageAsync(message);
        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task Abandon_redelivers_and_the_max_delivery_count_moves_the_message_to_the_dead_letter_queue()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("poison", new ServiceBusTestEntityOptions { MaxDeliveryCount = 2 });
        queue.Send("x"u8.ToArray(), messageId: "p");
        await using var receiver = harness.Client.CreateReceiver("poison");

        var first = await Receive.OneAsync(receiver);
        await receiver.AbandonMessageAsync(first);
        var second = await Receive.OneAsync(receiver);
        second.DeliveryCount.Should().Be(2);
        await receiver.AbandonMessageAsync(second);

        queue.ActiveCount.Should().Be(0);
        queue.DeadLetterCount.Should().Be(1);
        var record = queue.DeadLetters.Should().ContainSingle().Subject;
        record.MessageId.Should().Be("p");
        record.Reason.Should().Be("MaxDeliveryCountExceeded");
        record.DeliveryCount.Should().Be(2);

        await using var deadLetters = harness.Client.CreateReceiver("poison", new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter });
        var dead = await Receive.OneAsync(deadLetters);
        dead.MessageId.Should().Be("p");
        dead.DeadLetterReason.Should().Be("MaxDeliveryCountExceeded");
        dead.DeadLetterSource.Should().Be("poison");
        await deadLetters.CompleteMessageAsync(dead);
        harness.Broker.GetQueue("poison/$DeadLetterQueue").CompletionsOf("p").Should().Be(1);
    }

    [Fact]
    public async Task Expired_locks_count_as_deliveries_toward_the_max_delivery_count()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("expired", new ServiceBusTestEntityOptions { MaxDeliveryCount = 1, LockDuration = TimeSpan.FromSeconds(1) });
        queue.Send("x"u8.ToArray(), messageId: "e");
        await using var receiver = harness.Client.CreateReceiver("expired");
        await Receive.OneAsync(receiver);

        harness.Clock.Advance(TimeSpan.FromSeconds(1));

        queue.DeadLetters.Should().ContainSingle().Which.Reason.Should().Be("MaxDeliveryCountExceeded");
        queue.DeadLetterQueue!.ActiveCount.Should().Be(1);
    }
}
