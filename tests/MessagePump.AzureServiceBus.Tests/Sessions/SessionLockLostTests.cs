using System.Collections.Concurrent;
using System.Text;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Sessions;

/// <summary>
/// A session lock lost under a running session pump (the multi-session source, the real client against the test broker):
/// the pump reports the loss and goes on with the next session.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class SessionLockLostTests
{
    [Fact]
    public async Task A_session_lock_lost_under_a_running_handler_is_reported_and_the_pump_goes_on_with_the_next_session()
    {
        var lockDuration = TimeSpan.FromSeconds(2);
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = lockDuration, RequiresSession = true });
        queue.Send(Encoding.UTF8.GetBytes("a0"), "a0", sessionId: "a"); // the oldest message: session a is accepted first
        queue.Send(Encoding.UTF8.GetBytes("b0"), "b0", sessionId: "b");
        queue.Send(Encoding.UTF8.GetBytes("b1"), "b1", sessionId: "b");
        // Session a's lock is lost at the renewal after a0's first delivery reached its handler (410 session-lock-lost),
        // which runs until the pump cancels it. The fault is armed in the handler: the session's first renewal opens the
        // receiver's management link alongside the first receive, and failing that one would lose the session before
        // a0 is handed out.
        await using var source = await sb.Transport.OpenSessionsAsync(
            ServiceBusEntity.Queue("orders"),
            maxConcurrentSessions: 1,
            new ServiceBusSourceOptions { LockDuration = lockDuration, MaxWaitTime = TimeSpan.FromMilliseconds(200) });
        var log = new ListLogger();
        var handled = new ConcurrentQueue<(string MessageId, int DeliveryCount)>();

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, ct) =>
            {
                var message = (ServiceBusLeasedMessage)context.Message;
                handled.Enqueue((message.MessageId, message.DeliveryCount));
                if (message.MessageId == "a0" && message.DeliveryCount == 1)
                {
                    sb.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost);
                    await Task.Delay(Timeout.InfiniteTimeSpan, ct);
                }
            },
            () => queue.CompletedCount == 3,
            "three completions after the lost session",
            logger: log);

        handled.First().Should().Be(("a0", 1));
        stats.LeasesLost.Should().Be(1, "the pump counts the lost lease");
        log.Entries.Should().Contain(e => e.EventId.Id == 22 && e.Message.Contains("a0", StringComparison.Ordinal), "the pump logs the lost lease (event 22)");
        source.SessionsLost.Should().Be(1);
        handled.Where(h => h.MessageId.StartsWith('b')).Select(h => h.MessageId).Should().Equal(["b0", "b1"], "the pump went on with the next session, in order");
        handled.Should().Contain(("a0", 2), "the lost session's message came back and was handled again");
        queue.CompletionsOf("a0").Should().Be(1);
        queue.CompletionsOf("b0").Should().Be(1);
        queue.CompletionsOf("b1").Should().Be(1);
        queue.LockedCount.Should().Be(0);
    }
}
