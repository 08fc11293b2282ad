using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

public sealed class FaultTests
{
    [Theory]
    [InlineData(ServiceBusTestFault.LockLost, ServiceBusFailureReason.MessageLockLost, false)]
    [InlineData(ServiceBusTestFault.ServerBusy, ServiceBusFailureReason.ServiceBusy, true)]
    [InlineData(ServiceBusTestFault.Timeout, ServiceBusFailureReason.ServiceTimeout, true)]
    public async Task A_faulted_renewal_surfaces_as_the_matching_service_bus_exception(ServiceBusTestFault fault, ServiceBusFailureReason reason, bool transient)
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("renew-fault");
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("renew-fault");
        var message = await Receive.OneAsync(receiver);
        var lockedUntil = message.LockedUntil;
        harness.Broker.Faults.FailNextRenewals(1, fault);

        var renew = () => receiver.RenewMessageLockAsync(message);

        var exception = (await renew.Should().ThrowAsync<ServiceBusException>()).Which;
        exception.Reason.Should().Be(reason);
        exception.IsTransient.Should().Be(transient);
        queue.RenewCount.Should().Be(1);
        if (fault == ServiceBusTestFault.LockLost)
        {
            // As on the service, a 410 ends the lock: the next renewal is lost too, and the message comes back at once.
            (await renew.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
            var again = await Receive.OneAsync(receiver);
            again.MessageId.Should().Be("x");
            again.DeliveryCount.Should().Be(2);
            return;
        }

        await receiver.RenewMessageLockAsync(message);
        message.LockedUntil.Should().Be(lockedUntil, "the faulted renewal did not renew and the clock did not move");
        queue.RenewCount.Should().Be(2);
    }

    [Fact]
    public async Task A_late_renewal_is_answered_when_the_broker_clock_has_moved_by_the_delay()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("slow-renew", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send("x"u8.ToArray());
        await using var receiver = harness.Client.CreateReceiver("slow-renew");
        var message = await Receive.OneAsync(receiver);
        harness.Broker.Faults.RenewLockDelay = TimeSpan.FromSeconds(5);
        var start = harness.Clock.GetUtcNow();

        var renewal = receiver.RenewMessageLockAsync(message);
        // The request reaches the broker at a moment the test cannot see; step the clock until the answer goes out
        // (each step yields to let the request arrive; the bound only turns a hang into a failure).
        using var bound = new CancellationTokenSource(BrokerHarness.HangBound);
        while (!renewal.IsCompleted)
        {
            bound.Token.ThrowIfCancellationRequested();
            harness.Clock.Advance(TimeSpan.FromSeconds(1));
            await Task.WhenAny(renewal, Task.Delay(20, bound.Token));
        }

        await renewal;
        message.LockedUntil.Should().BeOnOrAfter(start + TimeSpan.FromSeconds(5) + queue.LockDuration, "the lock is renewed when the late answer goes out");
        queue.RenewCount.Should().Be(1);
    }

    [Fact]
    public async Task LoseSessionLockAsync_releases_a_held_session_and_detaches_its_holder_with_session_lock_lost()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("lose-session", new ServiceBusTestEntityOptions { RequiresSession = true });
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("lose-session", "s");
        var held = await Receive.OneAsync(first);

        var lost = await harness.Broker.Faults.LoseSessionLockAsync("lose-session", "s");

        lost.Should().BeTrue();
        first.IsClosed.Should().BeTrue("the client answered the detach before the task completed");
        queue.LockedCount.Should().Be(0, "the session's locked message came back at once");
        var complete = () => first.CompleteMessageAsync(held);
        await complete.Should().ThrowAsync<ObjectDisposedException>("the 7.21 client refuses operations on a session receiver whose link was detached");
        await using var second = await harness.Client.AcceptSessionAsync("lose-session", "s");
        (await Receive.OneAsync(second)).DeliveryCount.Should().Be(2);
        (await harness.Broker.Faults.LoseSessionLockAsync("lose-session", "nobody")).Should().BeFalse("no receiver holds that session");
        var unknown = () => harness.Broker.Faults.LoseSessionLockAsync("no-such-queue", "s");
        await unknown.Should().ThrowAsync<ArgumentException>();
    }

    [Fact]
    public async Task A_lock_lost_session_renewal_detaches_the_holders_link_at_once()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("renew-session-fault", new ServiceBusTestEntityOptions { RequiresSession = true });
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("renew-session-fault", "s");
        await Receive.OneAsync(first);
        harness.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost);

        var renew = () => first.RenewSessionLockAsync();

        (await renew.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.SessionLockLost);
        using var bound = new CancellationTokenSource(BrokerHarness.HangBound);
        while (!first.IsClosed)
        {
            await Task.Delay(10, bound.Token);
        }

        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_faulted_receive_surfaces_as_a_transient_server_busy_error()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("busy");
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("busy");
        harness.Broker.Faults.FailNextReceives(1, ServiceBusTestFault.ServerBusy);

        var receive = () => receiver.ReceiveMessagesAsync(1, BrokerHarness.HangBound);

        var exception = (await receive.Should().ThrowAsync<ServiceBusException>()).Which;
        exception.Reason.Should().Be(ServiceBusFailureReason.ServiceBusy);
        exception.IsTransient.Should().BeTrue();
        queue.ActiveCount.Should().Be(1, "the failed receive delivered nothing");
    }

    [Fact]
    public async Task A_faulted_receive_on_an_attached_link_detaches_it_and_the_client_reattaches()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("busy-attached");
        queue.Send("1"u8.ToArray(), messageId: "one");
        await using var receiver = harness.Client.CreateReceiver("busy-attached");
        await receiver.CompleteMessageAsync(await Receive.OneAsync(receiver));
        queue.Send("2"u8.ToArray(), messageId: "two");
        harness.Broker.Faults.FailNextReceives(1, ServiceBusTestFault.Timeout);

        // The client treats a receive link detached under a pending receive as "nothing received" and reattaches.
        var during = await receiver.ReceiveMessagesAsync(1, BrokerHarness.HangBound);
        during.Should().BeEmpty();
        var after = await Receive.OneAsync(receiver);
        after.MessageId.Should().Be("two");
        after.DeliveryCount.Should().Be(1, "the faulted receive delivered nothing");
    }

    [Fact]
    public async Task A_detached_receive_link_is_reattached_and_the_locks_it_held_are_lost_until_they_expire_as_on_Service_Bus()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("detach", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(10) });
        queue.Send("1"u8.ToArray(), messageId: "one");
        await using var receiver = harness.Client.CreateReceiver("detach");
        var held = await Receive.OneAsync(receiver);

        await harness.Broker.Faults.DetachReceiveLinksAsync("detach"); // returns once the client answered the detach
        queue.Send("2"u8.ToArray(), messageId: "two");
        var next = await Receive.OneAsync(receiver);

        next.MessageId.Should().Be("two");
        await receiver.CompleteMessageAsync(next);
        // The new link does not know the old delivery: the client tries update-disposition on $management, which
        // finds the lock gone with its link, before the lock's own expiry.
        held.LockedUntil.Should().BeAfter(harness.Clock.GetUtcNow());
        (await receiver.Invoking(r => r.CompleteMessageAsync(held)).Should().ThrowAsync<ServiceBusException>())
            .Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        (await receiver.Invoking(r => r.RenewMessageLockAsync(held)).Should().ThrowAsync<ServiceBusException>())
            .Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        queue.LockedCount.Should().Be(1, "the lock stays until it expires");

        harness.Clock.Advance(TimeSpan.FromSeconds(10));
        var again = await Receive.OneAsync(receiver);
        again.MessageId.Should().Be("one");
        again.DeliveryCount.Should().Be(2);
        await receiver.CompleteMessageAsync(again);
        queue.CompletionsOf("one").Should().Be(1);
        queue.CompletionsOf("two").Should().Be(1);
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_broker_that_goes_away_loses_nothing_locked_messages_come_back_after_their_locks_expire_and_complete_once()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 5);
        var queue = harness.Broker.CreateQueue("outage", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        await using var sender = harness.Client.CreateSender("outage");
        await sender.SendMessagesAsync([new ServiceBusMessage("a") { MessageId = "a" }, new ServiceBusMessage("b") { MessageId = "b" }]);
        await using var receiver = harness.Client.CreateReceiver("outage");
        var before = await Receive.ExactlyAsync(receiver, 2);
        var port = harness.Broker.Port;

        queue.LockedCount.Should().Be(2, "both were received");
        await harness.Broker.StopAsync();
        queue.LockedCount.Should().Be(2, "stopped");
        harness.Broker.IsListening.Should().BeFalse();
        var completeDuringOutage = () => receiver.CompleteMessageAsync(before[0]);
        await completeDuringOutage.Should().ThrowAsync<Exception>("the broker is gone and the link with it");
        queue.LockedCount.Should().Be(2, "nothing reached the broker");
        await harness.Broker.RestartAsync();
        harness.Broker.Port.Should().Be(port);
        queue.LockedCount.Should().Be(2, "the locks outlive the outage until they expire");

        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        var after = await Receive.ExactlyAsync(receiver, 2);
        after.Select(m => m.MessageId).Should().BeEquivalentTo(["a", "b"]);
        after.Should().OnlyContain(m => m.DeliveryCount == 2);
        foreach (var message in after)
        {
            await receiver.CompleteMessageAsync(message);
        }

        await sender.SendMessageAsync(new ServiceBusMessage("c") { MessageId = "c" });
        var completeExpired = () => receiver.CompleteMessageAsync(before[1]);
        (await completeExpired.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost);
        queue.CompletionsOf("a").Should().Be(1);
        queue.CompletionsOf("b").Should().Be(1);
        queue.CompletedCount.Should().Be(2);
        queue.ActiveCount.Should().Be(1);
    }

    [Theory]
    [InlineData(ServiceBusTestFault.ServerBusy, ServiceBusFailureReason.ServiceBusy)]
    [InlineData(ServiceBusTestFault.Timeout, ServiceBusFailureReason.ServiceTimeout)]
    public async Task A_faulted_send_surfaces_with_the_reason_and_enqueues_nothing_then_the_next_send_goes_through(ServiceBusTestFault fault, ServiceBusFailureReason reason)
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("send-fault");
        await using var sender = harness.Client.CreateSender("send-fault");
        harness.Broker.Faults.FailNext(ServiceBusTestOperations.Send, 1, fault);

        var send = () => sender.SendMessageAsync(new ServiceBusMessage("x") { MessageId = "x" });

        var exception = (await send.Should().ThrowAsync<ServiceBusException>()).Which;
        exception.Reason.Should().Be(reason);
        exception.IsTransient.Should().BeTrue();
        queue.ActiveCount.Should().Be(0, "the faulted send enqueued nothing");
        await send();
        queue.ActiveCount.Should().Be(1);
    }

    [Fact]
    public async Task A_faulted_send_is_retried_by_the_client_and_enqueued_once()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 2);
        var queue = harness.Broker.CreateQueue("send-retry");
        await using var sender = harness.Client.CreateSender("send-retry");
        harness.Broker.Faults.FailNext(ServiceBusTestOperations.Send, 2, ServiceBusTestFault.Timeout);

        await sender.SendMessagesAsync([new ServiceBusMessage("a") { MessageId = "a" }, new ServiceBusMessage("b") { MessageId = "b" }]);

        queue.ActiveCount.Should().Be(2, "the batch failed whole twice and went through whole on the third try");
        await using var receiver = harness.Client.CreateReceiver("send-retry");
        (await Receive.ExactlyAsync(receiver, 2)).Select(m => m.MessageId).Should().BeEquivalentTo(["a", "b"]);
    }

    [Theory]
    [InlineData(ServiceBusTestFault.ServerBusy, ServiceBusFailureReason.ServiceBusy)]
    [InlineData(ServiceBusTestFault.Timeout, ServiceBusFailureReason.ServiceTimeout)]
    public async Task A_faulted_complete_leaves_the_message_locked_and_the_call_after_the_faulted_ones_completes_it(ServiceBusTestFault fault, ServiceBusFailureReason reason)
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("complete-fault");
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("complete-fault");
        var message = await Receive.OneAsync(receiver);
        harness.Broker.Faults.FailNext(ServiceBusTestOperations.Complete, 2, fault);

        var complete = () => receiver.CompleteMessageAsync(message);

        // The first over the receive link, the second over $management (the answer settled the delivery).
        for (var i = 0; i < 2; i++)
        {
            var exception = (await complete.Should().ThrowAsync<ServiceBusException>()).Which;
            exception.Reason.Should().Be(reason);
            exception.IsTransient.Should().BeTrue();
            queue.LockedCount.Should().Be(1, "a faulted complete settles nothing");
            queue.CompletionsOf("x").Should().Be(0);
        }

        await complete();
        queue.CompletionsOf("x").Should().Be(1);
        queue.LockedCount.Should().Be(0);
        queue.ActiveCount.Should().Be(0);
    }

    [Theory]
    [InlineData(ServiceBusTestOperations.Abandon)]
    [InlineData(ServiceBusTestOperations.DeadLetter)]
    [InlineData(ServiceBusTestOperations.Defer)]
    public async Task A_faulted_settlement_of_each_kind_surfaces_and_settles_nothing_and_other_kinds_pass(ServiceBusTestOperations operation)
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("settle-fault");
        queue.Send("1"u8.ToArray(), messageId: "one");
        queue.Send("2"u8.ToArray(), messageId: "two");
        await using var receiver = harness.Client.CreateReceiver("settle-fault");
        var messages = await Receive.ExactlyAsync(receiver, 2);
        harness.Broker.Faults.FailNext(operation, 1, ServiceBusTestFault.Timeout);

        Func<Task> settle = operation switch
        {
            ServiceBusTestOperations.Abandon => () => receiver.AbandonMessageAsync(messages[0]),
            ServiceBusTestOperations.DeadLetter => () => receiver.DeadLetterMessageAsync(messages[0], "reason"),
            _ => () => receiver.DeferMessageAsync(messages[0]),
        };

        await receiver.CompleteMessageAsync(messages[1]);
        queue.CompletedCount.Should().Be(1, "a complete is not the faulted kind");
        (await settle.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.ServiceTimeout);
        queue.LockedCount.Should().Be(1, "the faulted settlement settled nothing");
        await settle();
        queue.LockedCount.Should().Be(0);
        (queue.ActiveCount + queue.DeadLetterCount + queue.DeferredCount).Should().Be(1);
    }

    [Fact]
    public async Task A_faulted_complete_is_retried_by_the_client_and_counted_once()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 2);
        var queue = harness.Broker.CreateQueue("complete-retry");
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("complete-retry");
        var message = await Receive.OneAsync(receiver);
        harness.Broker.Faults.FailNext(ServiceBusTestOperations.Settlements, 1, ServiceBusTestFault.Timeout);

        await receiver.CompleteMessageAsync(message);

        queue.CompletionsOf("x").Should().Be(1);
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_session_receivers_retry_of_a_faulted_complete_is_refused_by_the_client_as_session_lock_lost()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("session-complete-fault", new ServiceBusTestEntityOptions { RequiresSession = true });
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var session = await harness.Client.AcceptSessionAsync("session-complete-fault", "s");
        var message = await Receive.OneAsync(session);
        harness.Broker.Faults.FailNext(ServiceBusTestOperations.Complete, 1, ServiceBusTestFault.Timeout);

        var complete = () => session.CompleteMessageAsync(message);

        (await complete.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.ServiceTimeout);
        // The answer settled the delivery; the 7.21 client finds it gone from its link and, for a session receiver,
        // reports the lock lost without asking the broker. The session itself is still held.
        (await complete.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.SessionLockLost);
        queue.CompletionsOf("x").Should().Be(0);
        await session.RenewSessionLockAsync();
        session.IsClosed.Should().BeFalse();
    }

    [Theory]
    [InlineData(ServiceBusTestFault.ServerBusy, ServiceBusFailureReason.ServiceBusy)]
    [InlineData(ServiceBusTestFault.Timeout, ServiceBusFailureReason.ServiceTimeout)]
    public async Task A_faulted_session_renewal_surfaces_with_the_reason_keeps_the_session_and_the_next_renewal_renews(ServiceBusTestFault fault, ServiceBusFailureReason reason)
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("session-renew-fault", new ServiceBusTestEntityOptions { RequiresSession = true, LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var session = await harness.Client.AcceptSessionAsync("session-renew-fault", "s");
        var message = await Receive.OneAsync(session);
        var lockedUntil = session.SessionLockedUntil;
        harness.Broker.Faults.FailNext(ServiceBusTestOperations.RenewSessionLock, 1, fault);

        var renew = () => session.RenewSessionLockAsync();

        var exception = (await renew.Should().ThrowAsync<ServiceBusException>()).Which;
        exception.Reason.Should().Be(reason);
        exception.IsTransient.Should().BeTrue();
        session.IsClosed.Should().BeFalse("a busy or timed-out renewal loses nothing");
        harness.Clock.Advance(TimeSpan.FromSeconds(5));
        await renew();
        session.SessionLockedUntil.Should().Be(lockedUntil + TimeSpan.FromSeconds(5), "the renewal after the faulted one renewed from the clock's time");
        await session.CompleteMessageAsync(message);
        queue.CompletionsOf("x").Should().Be(1);
        queue.RenewCount.Should().Be(2);
    }

    [Theory]
    [InlineData(ServiceBusTestFault.ServerBusy, ServiceBusFailureReason.ServiceBusy)]
    [InlineData(ServiceBusTestFault.Timeout, ServiceBusFailureReason.ServiceTimeout)]
    public async Task A_faulted_management_request_surfaces_with_the_reason_and_the_next_one_is_answered(ServiceBusTestFault fault, ServiceBusFailureReason reason)
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("peek-fault");
        queue.Send("x"u8.ToArray(), messageId: "x");
        await using var receiver = harness.Client.CreateReceiver("peek-fault");
        harness.Broker.Faults.FailNext(ServiceBusTestOperations.Management, 1, fault);

        var peek = () => receiver.PeekMessageAsync();

        var exception = (await peek.Should().ThrowAsync<ServiceBusException>()).Which;
        exception.Reason.Should().Be(reason);
        exception.IsTransient.Should().BeTrue();
        (await peek())!.MessageId.Should().Be("x");
    }

    [Fact]
    public async Task A_faulted_schedule_request_schedules_nothing_and_the_client_retries_it()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 1);
        var queue = harness.Broker.CreateQueue("schedule-fault");
        await using var sender = harness.Client.CreateSender("schedule-fault");
        harness.Broker.Faults.FailNext(ServiceBusTestOperations.Management, 1, ServiceBusTestFault.Timeout);

        await sender.ScheduleMessageAsync(new ServiceBusMessage("x") { MessageId = "x" }, harness.Clock.GetUtcNow().AddMinutes(1));

        queue.ScheduledCount.Should().Be(1, "the faulted request scheduled nothing, the retry scheduled once");
    }

    [Fact]
    public async Task Dropped_connections_are_reopened_by_the_client_and_the_locks_they_held_come_back_when_they_expire()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 3);
        var queue = harness.Broker.CreateQueue("drop", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        await using var sender = harness.Client.CreateSender("drop");
        await sender.SendMessageAsync(new ServiceBusMessage("1") { MessageId = "one" });
        await using var receiver = harness.Client.CreateReceiver("drop");
        var held = await Receive.OneAsync(receiver);
        (await receiver.PeekMessageAsync()).Should().NotBeNull("the management link is open before the drop");

        await harness.Broker.Faults.DropConnectionsAsync();

        harness.Broker.IsListening.Should().BeTrue("only the connections went away");
        queue.LockedCount.Should().Be(1, "the lock stays until it expires");
        await sender.SendMessageAsync(new ServiceBusMessage("2") { MessageId = "two" });
        var next = await Receive.OneAsync(receiver);
        next.MessageId.Should().Be("two");
        await receiver.CompleteMessageAsync(next);
        (await receiver.PeekMessageAsync(held.SequenceNumber))!.MessageId.Should().Be("one", "the management link is reopened too");
        (await receiver.Invoking(r => r.CompleteMessageAsync(held)).Should().ThrowAsync<ServiceBusException>())
            .Which.Reason.Should().Be(ServiceBusFailureReason.MessageLockLost, "the lock was lost with its link");

        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        var again = await Receive.OneAsync(receiver);
        again.MessageId.Should().Be("one");
        again.DeliveryCount.Should().Be(2);
        await receiver.CompleteMessageAsync(again);
        queue.CompletionsOf("one").Should().Be(1);
        queue.CompletionsOf("two").Should().Be(1);
        queue.LockedCount.Should().Be(0);
        queue.ActiveCount.Should().Be(0);
    }

    [Fact]
    public async Task A_session_held_over_a_dropped_connection_is_released_at_once()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 3);
        var queue = harness.Broker.CreateQueue("drop-session", new ServiceBusTestEntityOptions { RequiresSession = true });
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("drop-session", "s");
        await Receive.OneAsync(first);

        await harness.Broker.Faults.DropConnectionsAsync();

        queue.LockedCount.Should().Be(0, "the session was released with its receiver's link");
        await using var second = await harness.Client.AcceptSessionAsync("drop-session", "s");
        var again = await Receive.OneAsync(second);
        again.DeliveryCount.Should().Be(2);
        await second.CompleteMessageAsync(again);
        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task DropConnectionsAsync_on_a_stopped_broker_does_nothing()
    {
        await using var harness = await BrokerHarness.StartAsync();
        await harness.Broker.StopAsync();

        await harness.Broker.Faults.DropConnectionsAsync();

        harness.Broker.IsListening.Should().BeFalse();
    }
}
