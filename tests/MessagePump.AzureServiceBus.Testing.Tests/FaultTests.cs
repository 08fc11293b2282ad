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
}
