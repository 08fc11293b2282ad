using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests.Conformance;

/// <summary>
/// The README's dialect, "Scheduled messages": a ScheduledEnqueueTime or ScheduleMessageAsync makes the message
/// available when the broker's clock reaches its time (ScheduledCount until then).
/// </summary>
[Trait("Conformance", "Scheduled")]
public sealed class ConformanceScheduled
{
    [Fact]
    public async Task A_message_scheduled_by_enqueue_time_arrives_when_the_broker_clock_reaches_it()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("scheduled");
        await using var sender = harness.Client.CreateSender("scheduled");
        var at = harness.Clock.GetUtcNow() + TimeSpan.FromMinutes(5);
        await sender.SendMessageAsync(new ServiceBusMessage("later") { MessageId = "later", ScheduledEnqueueTime = at });
        await using var receiver = harness.Client.CreateReceiver("scheduled");

        (await receiver.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(100))).Should().BeEmpty();
        queue.ScheduledCount.Should().Be(1);
        queue.ActiveCount.Should().Be(0);

        var waiting = receiver.ReceiveMessageAsync(BrokerHarness.HangBound);
        harness.Clock.Advance(TimeSpan.FromMinutes(5));
        var message = await waiting;

        message!.MessageId.Should().Be("later");
        message.EnqueuedTime.Should().Be(at);
        queue.ScheduledCount.Should().Be(0);
    }

    [Fact]
    public async Task A_message_scheduled_through_the_management_node_is_available_at_its_time_and_not_a_millisecond_before()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("scheduled-api");
        await using var sender = harness.Client.CreateSender("scheduled-api");
        await sender.ScheduleMessageAsync(new ServiceBusMessage("x") { MessageId = "x" }, harness.Clock.GetUtcNow().AddMinutes(1));

        harness.Clock.Advance(TimeSpan.FromMinutes(1) - TimeSpan.FromMilliseconds(1));
        var (scheduledBefore, activeBefore) = (queue.ScheduledCount, queue.ActiveCount);
        harness.Clock.Advance(TimeSpan.FromMilliseconds(1));

        (scheduledBefore, activeBefore).Should().Be((1, 0));
        queue.ScheduledCount.Should().Be(0);
        queue.ActiveCount.Should().Be(1);
    }

    [Fact]
    public async Task A_message_scheduled_for_the_present_or_the_past_arrives_at_once_with_its_scheduled_enqueue_time()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("scheduled-now");
        await using var sender = harness.Client.CreateSender("scheduled-now");
        var now = harness.Clock.GetUtcNow();
        var past = now - TimeSpan.FromMinutes(5);

        await sender.SendMessageAsync(new ServiceBusMessage("now") { MessageId = "now", ScheduledEnqueueTime = now });
        await sender.SendMessageAsync(new ServiceBusMessage("past") { MessageId = "past", ScheduledEnqueueTime = past });
        await using var receiver = harness.Client.CreateReceiver("scheduled-now");
        var messages = await Receive.ExactlyAsync(receiver, 2);

        queue.ScheduledCount.Should().Be(0);
        messages.Single(m => m.MessageId == "now").ScheduledEnqueueTime.Should().Be(now);
        messages.Single(m => m.MessageId == "past").ScheduledEnqueueTime.Should().Be(past);
    }
}
