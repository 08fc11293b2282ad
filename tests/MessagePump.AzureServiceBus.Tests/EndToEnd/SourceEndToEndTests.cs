using System.Text;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;

/// <summary>The source and its leased messages with the real SDK client against the test broker.</summary>
public sealed class SourceEndToEndTests
{
    [Fact]
    public async Task A_batch_receive_locks_the_messages_and_each_settles_as_asked()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        foreach (var id in new[] { "a", "b", "c" })
        {
            queue.Send(Encoding.UTF8.GetBytes(id), id, applicationProperties: new Dictionary<string, object> { ["kind"] = "order" });
        }

        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(30), TimeProvider = sb.Clock });
        var batch = await ReceiveAtLeastAsync(source, 3);

        batch.Select(m => m.MessageId).Should().Equal("a", "b", "c");
        batch[0].Headers.Should().Contain("kind", "order");
        queue.LockedCount.Should().Be(3);
        source.ObservedLockDuration.Should().Be(TimeSpan.FromSeconds(30));

        await batch[0].CompleteAsync();
        await batch[1].AbandonAsync();
        await ((ServiceBusLeasedMessage)batch[2]).DeadLetterAsync("poison", "the total was negative");

        queue.CompletionsOf("a").Should().Be(1);
        queue.DeadLetters.Should().ContainSingle(d => d.MessageId == "c" && d.Reason == "poison" && d.Description == "the total was negative");
        queue.ActiveCount.Should().Be(1); // b, abandoned
        var again = await ReceiveAtLeastAsync(source, 1);
        again.Single().MessageId.Should().Be("b");
        again.Single().DeliveryCount.Should().Be(2);
    }

    [Fact]
    public async Task Renew_extends_the_lock_by_the_entity_s_duration_from_now()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("x"), "x");
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { TimeProvider = sb.Clock });
        var message = (await ReceiveAtLeastAsync(source, 1)).Single();
        var first = message.LockedUntil;

        sb.VirtualClock.Advance(TimeSpan.FromSeconds(20));
        var renewed = await message.RenewLockAsync();

        renewed.Should().Be(first + TimeSpan.FromSeconds(20));
        message.LockedUntil.Should().Be(renewed);
        sb.VirtualClock.Advance(TimeSpan.FromSeconds(20)); // past the first lock, inside the renewed one
        await message.CompleteAsync();
        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task A_lock_that_expired_on_the_broker_is_a_lost_lease_and_the_message_comes_back()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("x"), "x");

        // The source judges locks on the system clock, so the call reaches the broker, whose (virtual) clock says expired.
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"));
        var message = (await ReceiveAtLeastAsync(source, 1)).Single();
        sb.VirtualClock.Advance(TimeSpan.FromSeconds(31));

        await message.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();
        await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();

        var again = (await ReceiveAtLeastAsync(source, 1)).Single();
        again.DeliveryCount.Should().Be(2);
        await again.CompleteAsync();
        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task A_message_whose_link_was_detached_has_lost_its_lease_before_LockedUntil_and_comes_back_to_be_completed_exactly_once()
    {
        // As on Service Bus: a lock belongs to the link that took it. Once the client has seen the detach (the fault's
        // task completes when the client answered it), settling the message (the SDK goes over $management) is
        // answered MessageLockLost, which the source maps to LeaseLostException, though LockedUntil is still ahead.
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("x"), "x");
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { TimeProvider = sb.Clock, MaxWaitTime = TimeSpan.FromMilliseconds(200) });
        var message = (await ReceiveAtLeastAsync(source, 1)).Single();

        await sb.Broker.Faults.DetachReceiveLinksAsync("orders");

        message.LockedUntil.Should().BeAfter(sb.Clock.GetUtcNow());
        await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        await message.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();
        queue.CompletionsOf("x").Should().Be(0);
        queue.LockedCount.Should().Be(1, "Service Bus keeps the lock until it expires");

        sb.VirtualClock.Advance(TimeSpan.FromSeconds(31)); // the lost lock runs out; the message comes back
        var again = (await ReceiveAtLeastAsync(source, 1)).Single();
        again.DeliveryCount.Should().Be(2);
        await again.CompleteAsync();

        queue.CompletionsOf("x").Should().Be(1);
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_renewal_answered_410_is_a_lost_lease()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders");
        queue.Send(Encoding.UTF8.GetBytes("x"), "x");
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { TimeProvider = sb.Clock });
        var message = (await ReceiveAtLeastAsync(source, 1)).Single();
        sb.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost);

        await message.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();
    }

    [Theory]
    [InlineData(ServiceBusTestFault.ServerBusy)]
    [InlineData(ServiceBusTestFault.Timeout)]
    public async Task A_busy_or_timed_out_broker_is_a_transient_failure_after_the_SDK_s_own_retries(ServiceBusTestFault fault)
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true, maxRetries: 0);
        var queue = sb.Broker.CreateQueue("orders");
        queue.Send(Encoding.UTF8.GetBytes("x"), "x");
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { TimeProvider = sb.Clock });
        var message = (await ReceiveAtLeastAsync(source, 1)).Single();
        sb.Broker.Faults.FailNextRenewals(1, fault);

        await message.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<TransientTransportException>();
        await message.RenewLockAsync(); // the next one goes through
        await message.CompleteAsync();
        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task A_missing_queue_fails_the_receive_naming_it_and_once_created_is_received_from_after_the_backoff()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true, maxRetries: 0);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("late"), new ServiceBusSourceOptions { TimeProvider = sb.Clock, MaxWaitTime = TimeSpan.FromMilliseconds(200) });

        var missing = (await source.Invoking(s => s.ReceiveBatchAsync(1)).Should().ThrowAsync<InvalidOperationException>()).Which;
        missing.Message.Should().Contain("queue 'late'");
        missing.InnerException.Should().BeOfType<Azure.Messaging.ServiceBus.ServiceBusException>()
            .Which.Reason.Should().Be(Azure.Messaging.ServiceBus.ServiceBusFailureReason.MessagingEntityNotFound, "the broker answers the attach amqp:not-found");
        source.Fault.Should().BeNull();

        var queue = sb.Broker.CreateQueue("late", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("x"), "x");
        var receive = ReceiveAtLeastAsync(source, 1);
        sb.VirtualClock.Advance(TimeSpan.FromSeconds(1)); // the backoff after one failure
        var message = (await receive).Single();

        message.MessageId.Should().Be("x");
        await message.RenewLockAsync(); // the $management link opens on the entity that is there now
        await message.CompleteAsync();
        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task A_wrong_lock_duration_is_caught_at_the_first_receive_and_the_messages_are_released()
    {
        await using var sb = await SbHarness.StartAsync(virtualTime: true);
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("x"), "x");
        await using (var wrong = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { LockDuration = TimeSpan.FromMinutes(5), TimeProvider = sb.Clock }))
        {
            (await wrong.Invoking(s => s.ReceiveBatchAsync(5)).Should().ThrowAsync<InvalidOperationException>()).Which.Message.Should().Contain("is wrong");
            wrong.Fault.Should().NotBeNull();
        }

        // Abandoned, not lost. (The SDK may already have taken it again into the closed receiver's link with the credit
        // left from the receive of 5: that lock runs out, and the message comes back all the same.)
        sb.VirtualClock.Advance(TimeSpan.FromSeconds(31));
        await using var right = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(30), TimeProvider = sb.Clock });
        var again = (await ReceiveAtLeastAsync(right, 1)).Single();
        again.MessageId.Should().Be("x");
        again.DeliveryCount.Should().BeGreaterThanOrEqualTo(2);
        await again.CompleteAsync();
        queue.CompletionsOf("x").Should().Be(1);
        queue.CompletedCount.Should().Be(1);
    }

    /// <summary>Receives until at least <paramref name="count"/> messages came (a receive may return fewer), bounded.</summary>
    internal static async Task<List<ILeasedMessage>> ReceiveAtLeastAsync(IMessageSource source, int count)
    {
        var received = new List<ILeasedMessage>();
        var deadline = DateTime.UtcNow + SbHarness.HangBound;
        while (received.Count < count)
        {
            DateTime.UtcNow.Should().BeBefore(deadline, $"{count} messages should arrive");
            received.AddRange(await source.ReceiveBatchAsync(count - received.Count));
        }

        return received;
    }
}
