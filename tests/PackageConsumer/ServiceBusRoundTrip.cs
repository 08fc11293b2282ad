using System.Globalization;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.AzureServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;

namespace PriorityAsync.PackageConsumer;

/// <summary>
/// The two Service Bus packages: an in-process ServiceBusTestBroker, three messages sent with the real
/// Azure.Messaging.ServiceBus client, pumped through the transport's source and completed, each exactly once, nothing
/// left locked. Also in the NativeAOT binary: the SDK, Microsoft.Azure.Amqp and the test broker publish without a trim
/// or AOT warning, and the round trip runs there too.
/// </summary>
internal static class ServiceBusRoundTrip
{
    public static async Task<string> RunAsync()
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        await using var client = new ServiceBusClient(broker.ConnectionString);
        await using (var sender = client.CreateSender("orders"))
        {
            for (var i = 0; i < 3; i++)
            {
                await sender.SendMessageAsync(new ServiceBusMessage(BitConverter.GetBytes(i)) { MessageId = i.ToString(CultureInfo.InvariantCulture) });
            }
        }

        await using var transport = new ServiceBusTransport(client, new ServiceBusTransportOptions { ReadEntityProperties = false });
        await using var source = await transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { LockDuration = queue.LockDuration });
        await using var scheduler = new PriorityTaskScheduler();
        await using var pump = new PriorityMessagePump(source, (context, cancellationToken) => Task.CompletedTask, scheduler);
        await pump.StartAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (queue.CompletedCount < 3 && !timeout.IsCancellationRequested)
        {
            await Task.Delay(10);
        }

        await pump.StopAsync();
        var once = Enumerable.Range(0, 3).All(i => queue.CompletionsOf(i.ToString(CultureInfo.InvariantCulture)) == 1);
        return queue.CompletedCount == 3 && once && queue.LockedCount == 0
            ? "3 of 3 messages completed once each on the test broker"
            : throw new InvalidOperationException($"{queue.CompletedCount} of 3 completed, {queue.LockedCount} locked");
    }
}
