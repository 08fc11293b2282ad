using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

public sealed class DeferTests
{
    [Fact]
    public async Task A_deferred_message_is_received_again_by_its_sequence_number_and_settled_over_management()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("defer", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(20) });
        queue.Send("x"u8.ToArray(), messageId: "d");
        await using var receiver = harness.Client.CreateReceiver("defer");
        var message = await Receive.OneAsync(receiver);

        await receiver.DeferMessageAsync(message);
        queue.DeferredCount.Should().Be(1);
        queue.ActiveCount.Should().Be(0);
        (await receiver.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(100))).Should().BeEmpty("a deferred message is not delivered again");

        var deferred = await receiver.ReceiveDeferredMessageAsync(message.SequenceNumber);
        deferred.MessageId.Should().Be("d");
        deferred.DeliveryCount.Should().Be(2);
        deferred.LockedUntil.Should().Be(harness.Clock.GetUtcNow() + TimeSpan.FromSeconds(20));
        harness.Clock.Advance(TimeSpan.FromSeconds(10));
        await receiver.RenewMessageLockAsync(deferred);
        await receiver.CompleteMessageAsync(deferred);

        queue.CompletionsOf("d").Should().Be(1);
        queue.DeferredCount.Should().Be(0);
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task An_expired_lock_on_a_deferred_message_leaves_it_deferred_and_an_unknown_sequence_number_is_not_found()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("defer-expiry", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(5) });
        queue.Send("x"u8.ToArray(), messageId: "d");
        await using var receiver = harness.Client.CreateReceiver("defer-expiry");
        var message = await Receive.OneAsync(receiver);
        await receiver.DeferMessageAsync(message);
        await receiver.ReceiveDeferredMessageAsync(message.SequenceNumber);

        harness.Clock.Advance(TimeSpan.FromSeconds(5));

        queue.DeferredCount.Should().Be(1);
        queue.ActiveCount.Should().Be(0);
        var missing = () => receiver.ReceiveDeferredMessageAsync(message.SequenceNumber + 1000);
        (await missing.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageNotFound);
    }
}
