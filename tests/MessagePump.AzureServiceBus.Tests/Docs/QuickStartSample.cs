using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>The quick start of docs/azure-service-bus.md, compiled and run against the test broker by <see cref="DocsSampleTests"/>.</summary>
internal static class QuickStartSample
{
    public static async Task<int> RunAsync(string connectionString, ServiceBusTransportOptions transportOptions)
    {
        var processed = 0;

        // <quick-start>
        await using var transport = new ServiceBusTransport(connectionString, transportOptions);
        await using var orders = await transport.OpenAsync(
            ServiceBusEntity.Queue("orders"),
            new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(30) }); // used when the entity cannot be read

        PriorityAsyncContext.Run(async () =>                                    // one thread
        {
            await using var pump = new PriorityMessagePump(
                orders,
                async (context, cancellationToken) =>
                {
                    var body = context.Message.Body;                            // CPU-heavy work goes here...
                    await PriorityScheduler.YieldIfNeeded();                 // ...and lets the lease lane renew locks
                    Interlocked.Increment(ref processed);
                },
                PriorityScheduler.Current!,
                new MessagePumpOptions { Name = "orders", MaxInFlight = 32 });
            await pump.StartAsync();
            while (Volatile.Read(ref processed) < 10)
            {
                await Task.Delay(50);
            }

            await pump.StopAsync();                                              // nothing stays locked
        });
        // </quick-start>

        return processed;
    }

    /// <summary>Sends the ten messages the quick start consumes, with the SDK's sender.</summary>
    public static async Task SendAsync(string connectionString)
    {
        await using var client = new ServiceBusClient(connectionString);
        await using var sender = client.CreateSender("orders");
        for (var i = 0; i < 10; i++)
        {
            await sender.SendMessageAsync(new ServiceBusMessage(BinaryData.FromString($"order {i}")) { MessageId = $"order-{i}" });
        }
    }
}
