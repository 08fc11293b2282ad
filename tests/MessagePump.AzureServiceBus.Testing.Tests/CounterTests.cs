using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>
/// The counts a test reads on a queue (<see cref="ServiceBusTestQueue.AbandonedCount"/>,
/// <see cref="ServiceBusTestQueue.RefusedRenewCount"/>) count what the client did to the broker, through the real
/// SDK: an abandon taken (an expired lock is not one), and a renewal refused because the lock was no longer held (an
/// injected fault is not one).
/// </summary>
public sealed class CounterTests
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Abandons_are_counted_as_taken_and_an_expired_lock_is_not_an_abandon()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("counted", new ServiceBusTestEntityOptions { LockDuration = LockDuration, MaxDeliveryCount = 2 });
        queue.Send(new byte[] { 1 }, "a");
        await using var receiver = harness.Client.CreateReceiver("counted");

        var first = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(5));
        await receiver.AbandonMessageAsync(first);
        queue.AbandonedCount.Should().Be(1);

        var second = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(5));
        second.DeliveryCount.Should().Be(2);
        await receiver.AbandonMessageAsync(second); // the last delivery: the broker dead-letters it
        queue.AbandonedCount.Should().Be(2, "the abandon that dead-letters a message at its max delivery count is an abandon too");
        queue.DeadLetters.Should().ContainSingle().Which.Reason.Should().Be("MaxDeliveryCountExceeded");

        queue.Send(new byte[] { 2 }, "b");
        _ = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(5));
        harness.Clock.Advance(LockDuration + TimeSpan.FromSeconds(1));
        queue.LockedCount.Should().Be(0, "the lock ran out");
        queue.AbandonedCount.Should().Be(2, "an expired lock returns the message without an abandon");
    }

    [Fact]
    public async Task A_renewal_of_a_lock_no_longer_held_is_refused_and_counted_and_an_injected_fault_is_not()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("renewed", new ServiceBusTestEntityOptions { LockDuration = LockDuration });
        queue.Send(new byte[] { 1 }, "a");
        queue.Send(new byte[] { 2 }, "b");
        await using var receiver = harness.Client.CreateReceiver("renewed");

        var held = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(5));
        await receiver.RenewMessageLockAsync(held);
        queue.RefusedRenewCount.Should().Be(0, "the lock was held");

        await receiver.CompleteMessageAsync(held);
        var settled = () => receiver.RenewMessageLockAsync(held);
        (await settled.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        queue.RefusedRenewCount.Should().Be(1, "the message was completed: its lock is no longer held");

        var expiring = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(5));
        harness.Clock.Advance(LockDuration + TimeSpan.FromSeconds(1));
        var expired = () => receiver.RenewMessageLockAsync(expiring);
        (await expired.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        queue.RefusedRenewCount.Should().Be(2, "the lock had run out");

        queue.Send(new byte[] { 3 }, "c");
        var faultedMessage = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(5));
        harness.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost);
        var faulted = () => receiver.RenewMessageLockAsync(faultedMessage);
        (await faulted.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        queue.RefusedRenewCount.Should().Be(2, "an injected fault is not a lock the broker no longer held");
        queue.RenewCount.Should().Be(4, "every renew request answered, the faulted one included");
    }
}
