using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// The README's dialect, "Sessions": the session filter (a session id or the next available one), the attach answer's
/// session id and lock, in-order delivery to the holder, release on close, a lost session's link detached at once.
/// </summary>
[Trait("Conformance", "Sessions")]
public sealed class ConformanceSessions
{
    private static readonly ServiceBusTestEntityOptions Sessions = new() { RequiresSession = true, LockDuration = TimeSpan.FromSeconds(30) };

    [Fact]
    public async Task The_next_session_delivers_its_messages_in_order_and_its_lock_renews()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("sessions", Sessions);
        await using var sender = harness.Client.CreateSender("sessions");
        await sender.SendMessagesAsync([
            new ServiceBusMessage("a1") { SessionId = "a", MessageId = "a1" },
            new ServiceBusMessage("b1") { SessionId = "b", MessageId = "b1" },
            new ServiceBusMessage("a2") { SessionId = "a", MessageId = "a2" },
            new ServiceBusMessage("a3") { SessionId = "a", MessageId = "a3" },
        ]);

        await using var session = await harness.Client.AcceptNextSessionAsync("sessions");
        session.SessionId.Should().Be("a", "a has the oldest message");
        session.SessionLockedUntil.Should().Be(harness.Clock.GetUtcNow() + TimeSpan.FromSeconds(30));
        var messages = await Receive.ExactlyAsync(session, 3);
        messages.Select(m => m.MessageId).Should().Equal("a1", "a2", "a3");
        messages.Should().OnlyContain(m => m.SessionId == "a");

        harness.Clock.Advance(TimeSpan.FromSeconds(20));
        await session.RenewSessionLockAsync();
        session.SessionLockedUntil.Should().Be(harness.Clock.GetUtcNow() + TimeSpan.FromSeconds(30));
        harness.Clock.Advance(TimeSpan.FromSeconds(20));
        queue.LockedCount.Should().Be(3, "the renewed session lock holds the session's messages");

        await session.SetSessionStateAsync(BinaryData.FromString("step-2"));
        (await session.GetSessionStateAsync()).ToString().Should().Be("step-2");
        foreach (var message in messages)
        {
            await session.CompleteMessageAsync(message);
        }

        await using var other = await harness.Client.AcceptSessionAsync("sessions", "b");
        var b = await Receive.OneAsync(other);
        b.MessageId.Should().Be("b1");
        await other.CompleteMessageAsync(b);
        queue.CompletedCount.Should().Be(4);
    }

    [Fact]
    public async Task A_locked_session_cannot_be_accepted_twice()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("taken", Sessions);
        queue.Send("x"u8.ToArray(), sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("taken", "s");

        var second = () => harness.Client.AcceptSessionAsync("taken", "s");

        (await second.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.SessionCannotBeLocked);
    }

    [Fact]
    public async Task An_expired_session_lock_releases_the_session_and_its_messages()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("expiring", Sessions);
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("expiring", "s");
        var held = await Receive.OneAsync(first);

        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        queue.ActiveCount.Should().Be(1);
        queue.Send("y"u8.ToArray(), messageId: "y", sessionId: "s");
        await SessionLinkClosedAsync(first);
        var renew = () => first.RenewSessionLockAsync();
        await renew.Should().ThrowAsync<ObjectDisposedException>("the expired holder's link was detached: the 7.21 client refuses its operations");

        await using var second = await harness.Client.AcceptSessionAsync("expiring", "s");
        var again = await Receive.OneAsync(second);
        again.MessageId.Should().Be("x");
        again.DeliveryCount.Should().Be(2);
        await second.CompleteMessageAsync(again);
        queue.CompletionsOf("x").Should().Be(1);
        held.LockToken.Should().NotBe(again.LockToken);
    }

    [Fact]
    public async Task A_receiver_whose_session_another_receiver_took_was_detached_when_its_lock_ran_out()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("taken-over", Sessions);
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("taken-over", "s");
        await Receive.OneAsync(first);
        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        await using var second = await harness.Client.AcceptSessionAsync("taken-over", "s");
        (await Receive.OneAsync(second)).MessageId.Should().Be("x");

        await SessionLinkClosedAsync(first);

        var again = () => first.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(100));
        await again.Should().ThrowAsync<ObjectDisposedException>("the 7.21 client treats a session receiver whose link was detached as closed");
        queue.LockedCount.Should().Be(1, "the new holder keeps its lock");
    }

    [Fact]
    public async Task Closing_a_session_receiver_releases_the_session_at_once_to_an_acceptor_that_renews_and_completes_it()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("release", Sessions);
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        var first = await harness.Client.AcceptSessionAsync("release", "s");
        await Receive.OneAsync(first);

        await first.DisposeAsync();
        await using var second = await harness.Client.AcceptNextSessionAsync("release");

        second.SessionId.Should().Be("s");
        var again = await Receive.OneAsync(second);
        again.DeliveryCount.Should().Be(2);
        harness.Clock.Advance(TimeSpan.FromSeconds(10));
        await second.RenewSessionLockAsync();
        second.SessionLockedUntil.Should().Be(harness.Clock.GetUtcNow() + TimeSpan.FromSeconds(30));
        await second.CompleteMessageAsync(again);
        queue.RenewCount.Should().Be(1);
        queue.CompletionsOf("x").Should().Be(1);
    }

    [Fact]
    public async Task A_receiver_waiting_for_the_next_session_gets_one_sent_later()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("later", Sessions);

        var accepting = harness.Client.AcceptNextSessionAsync("later");
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "late");
        await using var session = await accepting;

        session.SessionId.Should().Be("late");
        (await Receive.OneAsync(session)).MessageId.Should().Be("x");
    }

    [Fact]
    public async Task A_receive_waiting_on_a_session_whose_lock_expires_ends_at_once_with_the_link_detached()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("lost-while-waiting", Sessions);
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("lost-while-waiting", "s");
        await Receive.OneAsync(first);
        // Nothing more in the session: this receive waits up to the hang bound unless the broker detaches the link.
        var waiting = first.ReceiveMessagesAsync(1, BrokerHarness.HangBound);

        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        var returned = await waiting;

        returned.Should().BeEmpty();
        await SessionLinkClosedAsync(first); // detached com.microsoft:session-lock-lost: the 7.21 client closes the receiver
        await using var second = await harness.Client.AcceptSessionAsync("lost-while-waiting", "s");
        (await Receive.OneAsync(second)).DeliveryCount.Should().Be(2);
    }

    [Fact]
    public async Task An_expired_session_lock_detaches_the_holders_link_at_once_with_no_receive_waiting()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("lost-idle", Sessions);
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("lost-idle", "s");
        var held = await Receive.OneAsync(first);

        // No receive waits on the link: the service detaches it all the same when the session's lock runs out.
        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        await SessionLinkClosedAsync(first);

        // The 7.21 client, its session link detached with session-lock-lost, reports the receiver closed and refuses
        // every later operation on it: settling, renewing and receiving alike.
        var complete = () => first.CompleteMessageAsync(held);
        await complete.Should().ThrowAsync<ObjectDisposedException>();
        var renew = () => first.RenewSessionLockAsync();
        await renew.Should().ThrowAsync<ObjectDisposedException>();
        var receive = () => first.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(100));
        await receive.Should().ThrowAsync<ObjectDisposedException>();
        queue.LockedCount.Should().Be(0, "the session's locked message came back with the session");
        await using var second = await harness.Client.AcceptSessionAsync("lost-idle", "s");
        (await Receive.OneAsync(second)).DeliveryCount.Should().Be(2);
    }

    /// <summary>
    /// Waits until the client saw its session link detached (the 7.21 client then reports the session receiver closed,
    /// with SessionLockLost as the link's error). A broker that never detaches fails this at the hang bound.
    /// </summary>
    private static async Task SessionLinkClosedAsync(ServiceBusSessionReceiver receiver)
    {
        using var bound = new CancellationTokenSource(BrokerHarness.HangBound);
        while (!receiver.IsClosed)
        {
            await Task.Delay(10, bound.Token);
        }
    }
}
