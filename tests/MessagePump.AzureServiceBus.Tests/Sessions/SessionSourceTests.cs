using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Sessions;

/// <summary>One session: in order, one message out at a time, and the session lock as the lease of every message.</summary>
public sealed class SessionSourceTests
{
    private readonly VirtualTimeProvider _clock = new(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));
    private readonly FakeSessionReceiver _receiver;

    public SessionSourceTests()
    {
        _receiver = new FakeSessionReceiver("customer-7", new DateTimeOffset(2026, 1, 1, 0, 0, 30, TimeSpan.Zero));
    }

    [Fact]
    public async Task Messages_of_a_session_come_out_one_at_a_time_in_order()
    {
        _receiver.Enqueue(Received("1"), Received("2"), Received("3"));
        var source = Source();

        var first = (await source.ReceiveBatchAsync(10)).Should().ContainSingle().Subject;
        first.MessageId.Should().Be("1");

        // While 1 is out, a receive waits up to MaxWaitTime and returns nothing.
        var blocked = source.ReceiveBatchAsync(10);
        blocked.IsCompleted.Should().BeFalse();
        _clock.Advance(TimeSpan.FromSeconds(1));
        (await blocked).Should().BeEmpty();

        var waiting = source.ReceiveBatchAsync(10);
        await first.CompleteAsync();
        (await waiting).Single().MessageId.Should().Be("2");
        _receiver.Calls.Should().ContainInOrder("receive 1", "complete 1", "receive 1").And.NotContain("receive 10");
    }

    [Fact]
    public async Task Renewing_a_message_renews_the_session_lock_and_every_message_shares_its_expiry()
    {
        _receiver.Enqueue(Received("1"));
        var source = Source();
        var message = (await source.ReceiveBatchAsync(1)).Single();

        var lockedUntil = await message.RenewLockAsync();

        _receiver.Calls.Should().Contain("renew-session");
        lockedUntil.Should().Be(new DateTimeOffset(2026, 1, 1, 0, 1, 0, TimeSpan.Zero));
        message.LockedUntil.Should().Be(lockedUntil);
        source.SessionLockedUntil.Should().Be(lockedUntil);
        ((ServiceBusLeasedMessage)message).SessionId.Should().Be("customer-7");
    }

    [Fact]
    public async Task A_lost_session_lock_loses_every_message_of_the_session()
    {
        _receiver.Enqueue(Received("1"), Received("2"));
        var source = Source();
        var message = (await source.ReceiveBatchAsync(1)).Single();
        _receiver.RenewFailure = new ServiceBusException("session lock lost", ServiceBusFailureReason.SessionLockLost);

        await message.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();

        source.IsSessionLost.Should().BeTrue();
        await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        (await source.ReceiveBatchAsync(1)).Should().BeEmpty();
        _receiver.Calls.Should().NotContain(c => c.StartsWith("complete", StringComparison.Ordinal));
    }

    [Fact]
    public async Task A_receive_renews_the_session_lock_when_half_of_it_or_less_is_left()
    {
        var source = Source();
        _clock.Advance(TimeSpan.FromSeconds(14));
        (await source.ReceiveBatchAsync(1)).Should().BeEmpty();
        _receiver.Calls.Should().NotContain("renew-session");

        _clock.Advance(TimeSpan.FromSeconds(2));
        (await source.ReceiveBatchAsync(1)).Should().BeEmpty();
        _receiver.Calls.Should().Contain("renew-session");
    }

    [Fact]
    public async Task A_held_session_with_no_message_out_keeps_its_lock_renewed_without_a_receive()
    {
        await using var source = Source();

        // No receive at all (a pump at capacity with other sessions' messages does not ask): the lock is renewed
        // when half of it is left, and again after each renewal, so it never runs out while the session is held.
        _clock.Advance(TimeSpan.FromSeconds(14));
        _receiver.Calls.Should().NotContain("renew-session");
        _clock.Advance(TimeSpan.FromSeconds(1));
        _receiver.Calls.Should().ContainSingle(c => c == "renew-session");
        for (var i = 0; i < 4; i++)
        {
            _clock.Advance(TimeSpan.FromSeconds(30));
        }

        _receiver.Calls.Count(c => c == "renew-session").Should().Be(5);
        source.SessionLockedUntil.Should().BeAfter(_clock.GetUtcNow());
        source.IsSessionLost.Should().BeFalse();
    }

    [Fact]
    public async Task Disposing_the_source_stops_renewing_the_session_lock()
    {
        var source = Source();
        await source.DisposeAsync();

        _clock.Advance(TimeSpan.FromSeconds(60));

        _receiver.Calls.Should().NotContain("renew-session");
    }

    [Fact]
    public async Task A_message_received_after_the_session_lock_ran_out_is_not_handed_out()
    {
        // The lock is never renewed in time (the broker fails every renewal transiently) and runs out at 30 s; a
        // message that comes afterwards is not handed out, and the session is lost.
        _receiver.RenewFailure = new ServiceBusException("busy", ServiceBusFailureReason.ServiceBusy);
        await using var source = Source();
        _clock.Advance(TimeSpan.FromSeconds(31));
        _receiver.Enqueue(Received("1"));

        (await source.ReceiveBatchAsync(1)).Should().BeEmpty();

        source.IsSessionLost.Should().BeTrue();
    }

    [Fact]
    public async Task An_abandoned_message_comes_back_before_the_next_one()
    {
        var one = Received("1");
        _receiver.Enqueue(one);
        _receiver.OnSettle = (operation, message) =>
        {
            if (operation == "abandon")
            {
                _receiver.PutBack(message);
            }

            return Task.CompletedTask;
        };
        var source = Source();

        _receiver.Enqueue(Received("2"));
        var first = (await source.ReceiveBatchAsync(5)).Single();
        await first.AbandonAsync();

        // One message at a time: "2" was never taken ahead of "1", so the abandoned "1" comes first again.
        (await source.ReceiveBatchAsync(5)).Single().MessageId.Should().Be("1");
    }

    private ServiceBusSessionMessageSource Source() =>
        new(_receiver, new ServiceBusSourceOptions { TimeProvider = _clock, LockDuration = TimeSpan.FromSeconds(30), MaxWaitTime = TimeSpan.FromSeconds(1) });

    private ServiceBusReceivedMessage Received(string id) => Messages.Received(id, _receiver.LockedUntil, sessionId: "customer-7");
}
