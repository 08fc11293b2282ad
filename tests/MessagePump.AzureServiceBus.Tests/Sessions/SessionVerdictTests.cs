using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Sessions;

/// <summary>
/// The session's keeper alone judges when a kept session lock runs out: the receive path hands out a message under a
/// lock whose last answered expiry has passed while a renewal that reached the broker in time is unanswered, and the
/// message reads the same expiry as the keeper.
/// </summary>
public sealed class SessionVerdictTests
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(4);
    private readonly VirtualTimeProvider _clock = new(new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero));

    [Fact]
    public void A_message_that_comes_while_a_renewal_that_arrived_in_time_is_unanswered_is_handed_out()
    {
        // Renewals reach the broker at once and are answered in 1.6 s; the third one's answer comes back 3 s late (a
        // starved pool holds answers), past the lock's last answered expiry but within twice the worst round trip (late,
        // not overdue). The keeper holds the lock meanwhile (its renewal arrived in time), and so does the receive path:
        // the message that comes then is handed out, not dropped with the session.
        var receiver = new FakeSessionReceiver("s", _clock.GetUtcNow() + LockDuration)
        {
            Clock = _clock,
            RenewBy = LockDuration,
            AnswerDelay = index => index == 2 ? TimeSpan.FromSeconds(3) : TimeSpan.FromMilliseconds(1600), // round trips observed: the keeper tells a late answer from a lost renewal
        };
        ILeasedMessage? handedOut = null;
        DateTimeOffset knownAtReceive = default, heldAtReceive = default, nowAtReceive = default;
        var lostAtReceive = true;
        PriorityAsyncContext.Run(
            async () =>
            {
                await using var source = Source(receiver);
                (await source.ReceiveBatchAsync(1)).Should().BeEmpty("nothing was sent yet; the receive starts the session's keeper");
                await WaitUntilAsync(() => _clock.GetUtcNow() > source.SessionLockedUntil && receiver.UnansweredRenewals > 0, "the lock's answered expiry to pass with a renewal unanswered");

                receiver.Enqueue(Messages.Received("1", receiver.LockedUntil, sessionId: "s"));
                nowAtReceive = _clock.GetUtcNow();
                knownAtReceive = source.SessionLockedUntil;
                handedOut = (await source.ReceiveBatchAsync(1)).SingleOrDefault();
                heldAtReceive = handedOut?.LockedUntil ?? default;
                lostAtReceive = source.IsSessionLost;
                await WaitUntilAsync(() => receiver.UnansweredRenewals == 0, "the late answer");
                await handedOut!.CompleteAsync();
                source.IsSessionLost.Should().BeFalse("the late answer renewed the lock");
            },
            new PrioritySchedulerOptions { TimeProvider = _clock });

        handedOut.Should().NotBeNull($"the keeper holds the lock (its renewal reached the broker in time); receive at {nowAtReceive:HH:mm:ss.fff}, answered expiry {knownAtReceive:HH:mm:ss.fff}; renew calls: {receiver.Calls.Count(c => c == "renew-session")}");
        lostAtReceive.Should().BeFalse();
        heldAtReceive.Should().BeAfter(nowAtReceive, "the message reads the keeper's verdict, not the expiry passed");
        receiver.Calls.Should().Contain("complete 1");
    }

    [Fact]
    public void A_message_that_comes_after_the_keeper_found_the_lock_run_out_is_not_handed_out()
    {
        // The broker fails every renewal after the first two (busy): the lock runs out with nothing answered, the keeper
        // loses the session at its expiry, and a message that comes afterwards is not handed out.
        var receiver = new FakeSessionReceiver("s", _clock.GetUtcNow() + LockDuration) { Clock = _clock, RenewBy = LockDuration };
        var handed = new List<ILeasedMessage>();
        var lost = false;
        PriorityAsyncContext.Run(
            async () =>
            {
                await using var source = Source(receiver);
                (await source.ReceiveBatchAsync(1)).Should().BeEmpty();
                await WaitUntilAsync(() => receiver.Calls.Count(c => c == "renew-session") >= 2, "two renewals");
                receiver.RenewFailure = new ServiceBusException("busy", ServiceBusFailureReason.ServiceBusy);
                await WaitUntilAsync(() => _clock.GetUtcNow() > source.SessionLockedUntil + TimeSpan.FromMilliseconds(100), "the lock to run out");

                receiver.Enqueue(Messages.Received("1", receiver.LockedUntil, sessionId: "s"));
                handed.AddRange(await source.ReceiveBatchAsync(1));
                lost = source.IsSessionLost;
            },
            new PrioritySchedulerOptions { TimeProvider = _clock });

        handed.Should().BeEmpty("the lock ran out with no renewal answered: the broker may give the session to another receiver");
        lost.Should().BeTrue();
    }

    private ServiceBusSessionMessageSource Source(FakeSessionReceiver receiver) =>
        new(receiver, new ServiceBusSourceOptions { TimeProvider = _clock, LockDuration = LockDuration, MaxWaitTime = TimeSpan.FromSeconds(1) });

    private async Task WaitUntilAsync(Func<bool> condition, string what)
    {
        var deadline = _clock.GetUtcNow() + TimeSpan.FromSeconds(30);
        while (!condition())
        {
            _clock.GetUtcNow().Should().BeBefore(deadline, $"{what} within 30 s of virtual time");
            await Task.Delay(TimeSpan.FromMilliseconds(50), _clock);
        }
    }
}
