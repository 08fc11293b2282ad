using Azure.Core.Amqp;
using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Time.Testing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>What the broker answers where it used to differ from Service Bus (issue 32), through the 7.21 client.</summary>
public sealed class ServiceParityTests
{
    private static readonly ServiceBusTestEntityOptions Sessions = new() { RequiresSession = true, LockDuration = TimeSpan.FromSeconds(30) };

    [Fact]
    public async Task A_session_receiver_peeks_only_its_own_session()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("peek-sessions", Sessions);
        queue.Send("a1"u8.ToArray(), messageId: "a1", sessionId: "a");
        queue.Send("b1"u8.ToArray(), messageId: "b1", sessionId: "b");
        queue.Send("a2"u8.ToArray(), messageId: "a2", sessionId: "a");
        await using var session = await harness.Client.AcceptSessionAsync("peek-sessions", "a");

        var peeked = await session.PeekMessagesAsync(10);

        peeked.Select(m => m.MessageId).Should().Equal("a1", "a2");
        peeked.Should().OnlyContain(m => m.SessionId == "a");
    }

    [Fact]
    public async Task Cancelling_an_unknown_scheduled_sequence_number_is_answered_message_not_found()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("cancel-unknown");
        await using var sender = harness.Client.CreateSender("cancel-unknown");
        var scheduled = await sender.ScheduleMessageAsync(new ServiceBusMessage("s"), harness.Clock.GetUtcNow().AddMinutes(5));

        var cancel = () => sender.CancelScheduledMessagesAsync([scheduled, scheduled + 1000]);

        (await cancel.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.MessageNotFound);
        queue.ScheduledCount.Should().Be(1, "nothing is canceled when one sequence number is unknown");
        await sender.CancelScheduledMessageAsync(scheduled);
        queue.ScheduledCount.Should().Be(0);
    }

    [Fact]
    public async Task A_receiver_whose_session_another_receiver_took_cannot_renew_its_lock()
    {
        await using var harness = await BrokerHarness.StartAsync(maxRetries: 0);
        var queue = harness.Broker.CreateQueue("renew-taken", Sessions);
        queue.Send("x"u8.ToArray(), messageId: "x", sessionId: "s");
        await using var first = await harness.Client.AcceptSessionAsync("renew-taken", "s");
        await Receive.OneAsync(first);
        harness.Clock.Advance(TimeSpan.FromSeconds(30));
        await using var second = await harness.Client.AcceptSessionAsync("renew-taken", "s");
        var lockedUntil = second.SessionLockedUntil;
        harness.Clock.Advance(TimeSpan.FromSeconds(10));

        var renew = () => first.RenewSessionLockAsync();

        (await renew.Should().ThrowAsync<ServiceBusException>()).Which.Reason.Should().Be(ServiceBusFailureReason.SessionLockLost);
        harness.Clock.Advance(TimeSpan.FromSeconds(20));
        var late = () => second.RenewSessionLockAsync();
        (await late.Should().ThrowAsync<ServiceBusException>("the refused renewal did not extend the new holder's lock past {0}", lockedUntil)).Which.Reason.Should().Be(ServiceBusFailureReason.SessionLockLost);
    }
}
