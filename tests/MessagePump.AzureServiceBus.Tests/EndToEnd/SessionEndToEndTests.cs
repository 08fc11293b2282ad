using System.Collections.Concurrent;
using System.Text;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;

/// <summary>Sessions with the real SDK client against the test broker: in order, the session lock kept in the lease lane.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class SessionEndToEndTests
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(2);

    [Fact]
    public async Task A_pump_over_one_session_handles_its_messages_in_order_and_keeps_the_session_lock_past_its_duration()
    {
        var lockDuration = TimeSpan.FromSeconds(5); // renewed 2.5 s before expiry: margin for a loaded machine
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = lockDuration, RequiresSession = true });
        for (var i = 0; i < 5; i++)
        {
            queue.Send(Encoding.UTF8.GetBytes($"m{i}"), $"m{i}", sessionId: "customer-7");
        }

        await using var source = await sb.Transport.AcceptSessionAsync(ServiceBusEntity.Queue("orders"), "customer-7", new ServiceBusSourceOptions { LockDuration = lockDuration, MaxWaitTime = TimeSpan.FromMilliseconds(200) });
        var order = new ConcurrentQueue<string>();
        var concurrent = 0;
        var maxConcurrent = 0;

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, ct) =>
            {
                var now = Interlocked.Increment(ref concurrent);
                maxConcurrent = Math.Max(maxConcurrent, now);
                order.Enqueue(context.Message.MessageId);
                for (var i = 0; i < 8; i++)
                {
                    CpuBound.Hold(TimeSpan.FromMilliseconds(100));
                    await Task.Delay(TimeSpan.FromMilliseconds(50), ct);
                }

                Interlocked.Decrement(ref concurrent);
            },
            () => queue.CompletedCount == 5,
            "five completions");

        order.Should().Equal("m0", "m1", "m2", "m3", "m4");
        maxConcurrent.Should().Be(1, "a session's messages are handled one at a time");
        stats.LeasesLost.Should().Be(0);
        // The session lock is renewed by the message keepers and, between messages, by the receive (both in the lease
        // lane); the broker counts both.
        queue.RenewCount.Should().BePositive("the session (5 × 1.2 s of work) outlives its 5 s lock");
        source.IsSessionLost.Should().BeFalse();
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_lost_session_lock_loses_the_message_out_and_the_session_comes_back_to_the_next_acceptor()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration, RequiresSession = true });
        queue.Send(Encoding.UTF8.GetBytes("m0"), "m0", sessionId: "s");
        queue.Send(Encoding.UTF8.GetBytes("m1"), "m1", sessionId: "s");
        await using (var first = await sb.Transport.AcceptSessionAsync(ServiceBusEntity.Queue("orders"), "s", Options()))
        {
            var stats = await PumpRun.UntilAsync(
                first,
                (_, ct) =>
                {
                    // Armed once m0 is out: the session's first renewal, which opens its management link ahead of the
                    // first hand-out, has been answered by then, so the lost renewal is one made for the message out.
                    sb.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost);
                    return Task.Delay(Timeout.InfiniteTimeSpan, ct);
                },
                () => first.IsSessionLost,
                "the session lock to be lost");

            stats.LeasesLost.Should().Be(1);
            stats.Completed.Should().Be(0);
        }

        await Bounded.UntilAsync(() => Task.FromResult(queue.LockedCount == 0), SbHarness.HangBound, "the released session's messages to come back");
        // The next acceptor runs a pump on it right away: the session's messages come back in order, each completes once,
        // and the session lock is renewed while they are handled (the handler outlives the lock).
        var renewalsBefore = queue.RenewCount;
        await using var second = await sb.Transport.AcceptNextSessionAsync(ServiceBusEntity.Queue("orders"), Options());
        var order = new ConcurrentQueue<string>();
        var again = await PumpRun.UntilAsync(
            second,
            async (context, ct) =>
            {
                order.Enqueue(context.Message.MessageId);
                await Task.Delay(LockDuration, ct);
            },
            () => queue.CompletedCount == 2,
            "the re-accepted session's two completions");

        order.Should().Equal("m0", "m1");
        again.LeasesLost.Should().Be(0);
        second.IsSessionLost.Should().BeFalse();
        queue.RenewCount.Should().BeGreaterThan(renewalsBefore, "the re-accepted session's lock is renewed while its messages are handled");
        queue.CompletionsOf("m0").Should().Be(1);
        queue.CompletionsOf("m1").Should().Be(1);
    }

    [Fact]
    public async Task A_multi_session_source_runs_sessions_side_by_side_each_in_order()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration, RequiresSession = true });
        foreach (var session in new[] { "a", "b", "c" })
        {
            for (var i = 0; i < 3; i++)
            {
                queue.Send(Encoding.UTF8.GetBytes($"{session}{i}"), $"{session}{i}", sessionId: session);
            }
        }

        await using var source = await sb.Transport.OpenSessionsAsync(ServiceBusEntity.Queue("orders"), maxConcurrentSessions: 3, Options());
        var perSession = new ConcurrentDictionary<string, ConcurrentQueue<string>>();

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, ct) =>
            {
                var message = (ServiceBusLeasedMessage)context.Message;
                perSession.GetOrAdd(message.SessionId!, _ => new ConcurrentQueue<string>()).Enqueue(message.MessageId);
                await Task.Delay(TimeSpan.FromMilliseconds(100), ct);
            },
            () => queue.CompletedCount == 9,
            "nine completions");

        stats.LeasesLost.Should().Be(0);
        perSession.Keys.Should().BeEquivalentTo(["a", "b", "c"]);
        foreach (var (session, ids) in perSession)
        {
            ids.Should().Equal($"{session}0", $"{session}1", $"{session}2");
        }

        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task Session_options_on_an_entity_without_sessions_are_a_clear_error()
    {
        await using var sb = await SbHarness.StartAsync(maxRetries: 0);
        sb.Broker.CreateQueue("plain");

        var act = () => sb.Transport.AcceptNextSessionAsync(ServiceBusEntity.Queue("plain"), Options());

        (await act.Should().ThrowAsync<Exception>()).Which.Message.Should().Contain("queue 'plain'");
    }

    /// <summary>
    /// Runs a blocking pump run on a thread of its own. An awaited client call (an accept) can resume on the thread-pool
    /// thread that carries the client's AMQP connection; blocking that thread for the pump's whole run (PumpRun runs a
    /// PriorityAsyncContext on the calling thread) leaves the connection unread: no deliveries, no drain answers, no
    /// session-lock renewals until the run ends.
    /// </summary>

    private static ServiceBusSourceOptions Options() => new() { LockDuration = LockDuration, MaxWaitTime = TimeSpan.FromMilliseconds(200) };
}
