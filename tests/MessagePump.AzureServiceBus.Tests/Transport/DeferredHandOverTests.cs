using System.Text;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Transport;

/// <summary>
/// Deferred messages received for the pump are handed over at once: a receive waiting for the entity's messages ends
/// for them, with the real client against the test broker. Outcomes only, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class DeferredHandOverTests
{
    [Fact]
    public async Task A_receive_waiting_for_the_entity_returns_the_deferred_messages_received_meanwhile()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(Encoding.UTF8.GetBytes("later"), "later");
        long sequenceNumber;
        await using (var receiver = sb.Transport.Client.CreateReceiver("orders"))
        {
            var message = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(30));
            sequenceNumber = message.SequenceNumber;
            await receiver.DeferMessageAsync(message);
        }

        // The wait is a minute: without the hand-over this receive returns nothing when it ends, and the deferred
        // message only with the next one.
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { MaxWaitTime = TimeSpan.FromMinutes(1) });
        var waiting = source.ReceiveBatchAsync(10);
        await source.ReceiveDeferredAsync([sequenceNumber], CancellationToken.None);

        var handedOver = await waiting.WaitAsync(SbHarness.HangBound);

        handedOver.Should().ContainSingle().Which.MessageId.Should().Be("later");
        await handedOver[0].CompleteAsync();
        queue.CompletionsOf("later").Should().Be(1);
        queue.LockedCount.Should().Be(0, "the receive cut short locked nothing else");
    }
}
