using System.Collections.Concurrent;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Live;

/// <summary>
/// The end-to-end flows against a real namespace or the emulator (opt-in, <see cref="LiveServiceBusFactAttribute"/>):
/// what needs no injected fault. Outcomes are read back with the SDK (receive, the dead-letter sub-queue).
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class LiveServiceBusTests(ITestOutputHelper output)
{
    [LiveServiceBusFact]
    public async Task Batch_receive_renew_and_each_settlement_against_the_live_namespace()
    {
        await using var client = new ServiceBusClient(LiveServiceBusFactAttribute.ConnectionString);
        await DrainAsync(client);
        var ids = await SendAsync(client, 3);
        await using var transport = new ServiceBusTransport(client);
        await using var source = await transport.OpenAsync(ServiceBusEntity.Queue(LiveServiceBusFactAttribute.QueueName));

        var batch = await SourceEndToEndTests.ReceiveAtLeastAsync(source, 3);
        var before = batch[0].LockedUntil;
        var renewed = await batch[0].RenewLockAsync();
        await batch[0].CompleteAsync();
        await batch[1].AbandonAsync();
        await ((ServiceBusLeasedMessage)batch[2]).DeadLetterAsync("live-test", "dead-lettered by the live run");

        output.WriteLine($"observed lock {source.ObservedLockDuration}, renewed {before:O} -> {renewed:O}");
        renewed.Should().BeOnOrAfter(before);
        batch.Select(m => m.MessageId).Should().BeEquivalentTo(ids);
        var again = await SourceEndToEndTests.ReceiveAtLeastAsync(source, 1);
        again.Single().MessageId.Should().Be(batch[1].MessageId);
        again.Single().DeliveryCount.Should().Be(2);
        await again.Single().CompleteAsync();
        await using var deadLetters = client.CreateReceiver(LiveServiceBusFactAttribute.QueueName, new ServiceBusReceiverOptions { SubQueue = SubQueue.DeadLetter, ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete });
        var dead = await deadLetters.ReceiveMessageAsync(TimeSpan.FromSeconds(10));
        dead.Should().NotBeNull();
        dead!.MessageId.Should().Be(batch[2].MessageId);
        dead.DeadLetterReason.Should().Be("live-test");
        dead.DeadLetterErrorDescription.Should().Be("dead-lettered by the live run");
    }

    [LiveServiceBusFact]
    public async Task A_pump_with_CPU_heavy_handlers_on_one_thread_completes_each_message_once_and_a_stop_leaves_nothing_locked()
    {
        await using var client = new ServiceBusClient(LiveServiceBusFactAttribute.ConnectionString);
        await DrainAsync(client);
        var ids = await SendAsync(client, 6);
        await using var transport = new ServiceBusTransport(client);
        await using var source = await transport.OpenAsync(ServiceBusEntity.Queue(LiveServiceBusFactAttribute.QueueName));
        var handled = new ConcurrentDictionary<string, int>();

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, ct) =>
            {
                for (var i = 0; i < 4; i++)
                {
                    CpuBound.Hold(TimeSpan.FromMilliseconds(150));
                    await Task.Delay(TimeSpan.FromMilliseconds(50), ct);
                }

                handled.AddOrUpdate(context.Message.MessageId, 1, (_, n) => n + 1);
            },
            () => handled.Count == ids.Count,
            "every message handled");

        output.WriteLine($"pump: {stats}");
        stats.LeasesLost.Should().Be(0);
        handled.Keys.Should().BeEquivalentTo(ids);
        handled.Values.Should().OnlyContain(n => n == 1);
        await using var check = client.CreateReceiver(LiveServiceBusFactAttribute.QueueName);
        (await check.PeekMessageAsync()).Should().BeNull("every message was completed and none is left locked or visible");
    }

    private static async Task<IReadOnlyList<string>> SendAsync(ServiceBusClient client, int count)
    {
        await using var sender = client.CreateSender(LiveServiceBusFactAttribute.QueueName);
        var ids = Enumerable.Range(0, count).Select(i => $"live-{Guid.NewGuid():N}-{i}").ToArray();
        foreach (var id in ids)
        {
            await sender.SendMessageAsync(new ServiceBusMessage(BinaryData.FromString(id)) { MessageId = id });
        }

        return ids;
    }

    private static async Task DrainAsync(ServiceBusClient client)
    {
        foreach (var subQueue in new[] { SubQueue.None, SubQueue.DeadLetter })
        {
            await using var receiver = client.CreateReceiver(LiveServiceBusFactAttribute.QueueName, new ServiceBusReceiverOptions { ReceiveMode = ServiceBusReceiveMode.ReceiveAndDelete, SubQueue = subQueue });
            while ((await receiver.ReceiveMessagesAsync(100, TimeSpan.FromSeconds(1))).Count > 0)
            {
            }
        }
    }
}
