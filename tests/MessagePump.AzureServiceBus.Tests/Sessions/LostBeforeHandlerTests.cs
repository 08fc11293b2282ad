using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Sessions;

/// <summary>A message whose session lock the pump finds lost before its handler starts never reaches the handler.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class LostBeforeHandlerTests
{
    [Fact]
    public async Task A_message_whose_lease_is_lost_before_its_handler_starts_never_reaches_the_handler()
    {
        // The session lock has already run out by the last renewal answered when the message arrives, so the pump's lease
        // keeper finds it lost at once (the lease lane runs ahead of the processing lane that starts the handler),
        // without a renewal: nothing can renew a lock whose known expiry has passed.
        var receiver = new FakeSessionReceiver("s", DateTimeOffset.UtcNow - TimeSpan.FromSeconds(1))
        {
            RenewFailure = new ServiceBusException("session lock lost", ServiceBusFailureReason.SessionLockLost),
        };
        var session = new SessionLock(receiver, ServiceBusEntity.Queue("orders"));
        var message = new ServiceBusLeasedMessage(receiver, Messages.Received("1", receiver.LockedUntil, sessionId: "s"), ServiceBusEntity.Queue("orders"), session);
        var source = new OneMessageSource(message);
        var handled = 0;
        PriorityMessagePump? running = null;

        var stats = await PumpRun.UntilAsync(
            source,
            (_, _) =>
            {
                Interlocked.Increment(ref handled);
                return Task.CompletedTask;
            },
            () => running?.GetStatistics().LeasesLost == 1,
            "the lease to be found lost",
            whileRunning: pump =>
            {
                running = pump;
                return Task.CompletedTask;
            });

        handled.Should().Be(0, "the lease was lost before the handler started: the broker may deliver the message elsewhere");
        stats.LeasesLost.Should().Be(1);
        stats.Completed.Should().Be(0);
        stats.ExpiredAtHandOff.Should().Be(1);
        receiver.Calls.Should().NotContain(c => c.StartsWith("complete", StringComparison.Ordinal));
    }

    private sealed class OneMessageSource(ILeasedMessage message) : IMessageSource
    {
        private int _taken;

        public TimeSpan? LockDuration => TimeSpan.FromSeconds(30);

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            Task.FromResult(Interlocked.Exchange(ref _taken, 1) == 0 ? message : null);
    }
}
