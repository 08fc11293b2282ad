using PriorityAsync.MessagePump.AzureServiceBus.Internal;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Sessions;

/// <summary>
/// A session lock renewal still under way when the session closes answers as the renewal contract says — the lock is
/// no longer held (<see cref="LeaseLostException"/>) — not with the cancellation that ended it, which a keeper reads as
/// a broken batch renewal; and closing the session is no loss.
/// </summary>
public sealed class SessionCloseRenewalTests
{
    [Fact]
    public async Task A_renewal_under_way_when_the_session_closes_answers_lost_and_the_session_is_not_marked_lost()
    {
        var clock = new VirtualTimeProvider();
        var receiver = new FakeSessionReceiver("s", clock.GetUtcNow() + TimeSpan.FromSeconds(5))
        {
            Clock = clock,
            AnswerDelay = _ => TimeSpan.FromMinutes(1), // unanswered until the close ends it
        };
        var sessionLock = new SessionLock(receiver, ServiceBusEntity.Queue("orders"));
        var renewal = sessionLock.RenewAsync(sessionLock.LockedUntil, CancellationToken.None);
        receiver.UnansweredRenewals.Should().Be(1, "the renewal is under way");

        await sessionLock.StopKeeperAsync();

        var thrown = await renewal.Invoking(r => r).Should().ThrowAsync<LeaseLostException>("a renewal ended by the session's close says the lock is no longer held");
        thrown.Which.InnerException.Should().BeAssignableTo<OperationCanceledException>();
        sessionLock.IsLost.Should().BeFalse("closing the session is no loss");
        sessionLock.Dispose();
    }
}
