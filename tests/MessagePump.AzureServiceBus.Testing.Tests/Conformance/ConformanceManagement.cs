using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// The README's dialect, "$management": renew-lock, renew-session-lock, update-disposition, session state,
/// receive-by-sequence-number, peek, schedule and cancel, answered with the service's status codes and conditions.
/// </summary>
[Trait("Conformance", "Management")]
public sealed class ConformanceManagement
{
    private static readonly ServiceBusTestEntityOptions Sessions = new() { RequiresSession = true, LockDuration = TimeSpan.FromSeconds(30) };

    [Fact]
    public async Task Peek_shows_available_and_locked_messages_in_order_without_locking_them()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("peek");
        queue.Send("1"u8.ToArray(), messageId: "one");
        queue.Send("2"u8.ToArray(), messageId: "two");
        queue.Send("3"u8.ToArray(), messageId: "three");
        await using var receiver = harness.Client.CreateReceiver("peek");
        var locked = await Receive.OneAsync(receiver);

        var peeked = await receiver.PeekMessagesAsync(10);
        var more = await receiver.PeekMessagesAsync(10);

        peeked.Select(m => m.MessageId).Should().Equal("one", "two", "three");
        peeked.Select(m => m.SequenceNumber).Should().BeInAscendingOrder();
        peeked[0].LockedUntil.Should().Be(locked.LockedUntil);
        more.Should().BeEmpty("the receiver peeks on from the last sequence number it saw");
        queue.LockedCount.Should().Be(1);
        queue.ActiveCount.Should().Be(2);
    }

    [Fact]
    public async Task ScheduleMessageAsync_returns_a_sequence_number_that_cancels_the_message()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("schedule-api");
        await using var sender = harness.Client.CreateSender("schedule-api");
        var at = harness.Clock.GetUtcNow() + TimeSpan.FromMinutes(1);

        var kept = await sender.ScheduleMessageAsync(new ServiceBusMessage("kept") { MessageId = "kept" }, at);
        var cancelled = await sender.ScheduleMessageAsync(new ServiceBusMessage("cancelled") { MessageId = "cancelled" }, at);
        await sender.CancelScheduledMessageAsync(cancelled);

        kept.Should().BePositive();
        queue.ScheduledCount.Should().Be(1);
        harness.Clock.Advance(TimeSpan.FromMinutes(1));
        await using var receiver = harness.Client.CreateReceiver("schedule-api");
        var message = await Receive.OneAsync(receiver);
        message.MessageId.Should().Be("kept");
        message.SequenceNumber.Should().Be(kept);
        queue.ActiveCount.Should().Be(0);
    }

    [Fact]
    public async Task Renewing_a_lock_moves_its_expiry_from_now()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("renew", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(20) });
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("renew");
        var message = await Receive.OneAsync(receiver);

        harness.Clock.Advance(TimeSpan.FromSeconds(15));
        await receiver.RenewMessageLockAsync(message);

        message.LockedUntil.Should().Be(harness.Clock.GetUtcNow() + TimeSpan.FromSeconds(20));
        queue.RenewCount.Should().Be(1);
        harness.Clock.Advance(TimeSpan.FromSeconds(15));
        queue.LockedCount.Should().Be(1, "the renewed lock has 5 seconds left");
        await receiver.CompleteMessageAsync(message);
        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task Renewing_an_expired_lock_fails_with_message_lock_lost()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("late", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(5) });
        queue.Send("x"u8.ToArray());
        await using var receiver = harness.Client.CreateReceiver("late");
        var message = await Receive.OneAsync(receiver);
        harness.Clock.Advance(TimeSpan.FromSeconds(5));

        var renew = () => receiver.RenewMessageLockAsync(message);

        (await renew.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
    }

    [Fact]
    public async Task A_session_receiver_peeks_only_its_own_session()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("peek-sessions", Sessions);
        queue.Send("a1"u8.ToArray(), messageId: "a1", sessionId: "a");
        queue.Send("b1"u8.ToArray(), messageId: "b1", sessionId: "b");
        queue.Send("a2"u8.ToArray(), messageId: "a2", sessionId: "a");
        await using var session = await harness.Client.AcceptSessionAsync("peek-sessions", "a");

        var peeked = await session.PeekMessagesAsync(10);

        peeked.Select(m => m.MessageId).Should().Equal("a1", "a2");
        peeked.Should().OnlyContain(m => m.SessionId == "a");
    }

    [Fact]
    public async Task Cancelling_an_unknown_scheduled_sequence_number_is_answered_message_not_found()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("cancel-unknown");
        await using var sender = harness.Client.CreateSender("cancel-unknown");
        var scheduled = await sender.ScheduleMessageAsync(new ServiceBusMessage("s"), harness.Clock.GetUtcNow().AddMinutes(5));

        var cancel = () => sender.CancelScheduledMessagesAsync([scheduled, scheduled + 1000]);

        (await cancel.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageNotFound);
        queue.ScheduledCount.Should().Be(1, "nothing is canceled when one sequence number is unknown");
        await sender.CancelScheduledMessageAsync(scheduled);
        queue.ScheduledCount.Should().Be(0);
    }

    [Fact]
    public async Task A_receiver_whose_session_another_receiver_took_cannot_renew_its_lock()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("renew-taken", Sessions);
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("renew-taken", "s");
        await Receive.OneAsync(first);
        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        await using var second = await harness.Client.AcceptSessionAsync("renew-taken", "s");
        harness.Clock.Advance(TimeSpan.FromSeconds(10));
        using (var bound = new CancellationTokenSource(BrokerHarness.HangBound))
        {
            // The broker detached the first holder's link when its lock ran out: the 7.21 client refuses its renewal.
            while (!first.IsClosed)
            {
                await Task.Delay(10, bound.Token);
            }
        }

        var renew = () => first.RenewSessionLockAsync();

        await renew.Should().ThrowAsync<ObjectDisposedException>();
        await second.RenewSessionLockAsync();
        second.SessionLockedUntil.Should().Be(harness.Clock.GetUtcNow() + TimeSpan.FromSeconds(30), "the new holder's lock is its own");
    }

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

    [Fact]
    public async Task Renewing_a_session_lock_moves_its_expiry_from_now()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("renew-session", Sessions);
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var session = await harness.Client.AcceptSessionAsync("renew-session", "s");

        harness.Clock.Advance(TimeSpan.FromSeconds(25));
        await session.RenewSessionLockAsync();

        session.SessionLockedUntil.Should().Be(harness.Clock.GetUtcNow() + TimeSpan.FromSeconds(30));
        queue.RenewCount.Should().Be(1);
        harness.Clock.Advance(TimeSpan.FromSeconds(25));
        (await Receive.OneAsync(session)).MessageId.Should().Be("x", "the renewed session lock still holds the session");
    }

    [Fact]
    public async Task Session_state_reads_empty_until_set_then_what_was_set()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("state", Sessions);
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var session = await harness.Client.AcceptSessionAsync("state", "s");

        var before = await session.GetSessionStateAsync();
        await session.SetSessionStateAsync(BinaryData.FromBytes(new byte[] { 1, 2, 3 }));
        var after = await session.GetSessionStateAsync();

        (before is null || before.ToArray().Length == 0).Should().BeTrue("a session starts without state");
        after.ToArray().Should().Equal(1, 2, 3);
    }
}
