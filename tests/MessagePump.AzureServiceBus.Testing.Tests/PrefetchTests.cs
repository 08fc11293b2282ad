using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

public sealed class PrefetchTests
{
    [Fact]
    public async Task A_prefetching_receiver_gets_every_message_once_and_the_broker_counts_prefetched_ones_as_locked()
    {
        await using var harness = await BrokerHarness.StartAsync();
        var queue = harness.Broker.CreateQueue("prefetch");
        for (var i = 0; i < 20; i++)
        {
            queue.Send("x"u8.ToArray(), messageId: $"p{i}");
        }

        await using var receiver = harness.Client.CreateReceiver("prefetch", new ServiceBusReceiverOptions { PrefetchCount = 5 });
        var received = new List<ServiceBusReceivedMessage>();
        using var bound = new CancellationTokenSource(BrokerHarness.HangBound);
        while (received.Count < 20)
        {
            foreach (var message in await receiver.ReceiveMessagesAsync(3, BrokerHarness.HangBound, bound.Token))
            {
                received.Add(message);
                await receiver.CompleteMessageAsync(message, bound.Token);
            }
        }

        received.Select(m => m.MessageId).Should().Equal(Enumerable.Range(0, 20).Select(i => $"p{i}"));
        queue.CompletedCount.Should().Be(20);
        queue.LockedCount.Should().Be(0);
    }
}
