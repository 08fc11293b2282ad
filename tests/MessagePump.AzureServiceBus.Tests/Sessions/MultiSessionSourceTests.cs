using System.Text;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Sessions;

/// <summary>The multi-session source's receive against the test broker (the real client): what it waits for.</summary>
public sealed class MultiSessionSourceTests
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(30);

    /// <summary>
    /// A receive made while every held session has its message out (the pump receives while a complete is answered)
    /// waits for the message to be settled and brings the session's next one: answered with nothing at once, it would
    /// make the pump sleep its empty-receive delay once per message, the session throughput's cost.
    /// </summary>
    [Fact]
    public async Task A_receive_while_every_held_session_has_its_message_out_waits_for_the_settlement_and_brings_the_next_message()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration, RequiresSession = true });
        queue.Send(Encoding.UTF8.GetBytes("m0"), "m0", sessionId: "s");
        queue.Send(Encoding.UTF8.GetBytes("m1"), "m1", sessionId: "s");
        await using var source = await sb.Transport.OpenSessionsAsync(
            ServiceBusEntity.Queue("orders"),
            maxConcurrentSessions: 1,
            new ServiceBusSourceOptions { LockDuration = LockDuration, MaxWaitTime = SbHarness.HangBound });

        var first = await source.ReceiveAsync();
        first!.MessageId.Should().Be("m0");

        var next = source.ReceiveBatchAsync(1);
        next.IsCompleted.Should().BeFalse("the held session's message is out: its settlement is waited for, not answered with nothing");
        await first.CompleteAsync();

        var second = (await next).Should().ContainSingle().Subject;
        second.MessageId.Should().Be("m1");
        await second.CompleteAsync(); // settled: the session is free for the other tests of this process
    }
}
