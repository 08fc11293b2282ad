using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>
/// The side-by-side of docs/azure-service-bus.md: a <see cref="ServiceBusProcessor"/> consumer and the same consumer on
/// the pump. Both compile; <see cref="DocsSampleTests"/> runs the pump side against the test broker.
/// </summary>
internal static class ProcessorMigrationSample
{
    // <processor>
    public static async Task RunProcessorAsync(ServiceBusClient client, Func<BinaryData, CancellationToken, Task> handle, CancellationToken stop)
    {
        await using var processor = client.CreateProcessor("orders", new ServiceBusProcessorOptions
        {
            MaxConcurrentCalls = 16,
            AutoCompleteMessages = false,
            MaxAutoLockRenewalDuration = TimeSpan.FromMinutes(10),   // renewed by a loop per message, on the thread pool
        });
        processor.ProcessMessageAsync += async args =>
        {
            if (args.Message.DeliveryCount > 5)
            {
                await args.DeadLetterMessageAsync(args.Message, "TooManyAttempts", "gave up after 5 deliveries");
                return;
            }

            await handle(args.Message.Body, args.CancellationToken);
            await args.CompleteMessageAsync(args.Message);
        };
        processor.ProcessErrorAsync += args =>
        {
            Console.Error.WriteLine($"{args.ErrorSource}: {args.Exception.Message}");
            return Task.CompletedTask;
        };
        await processor.StartProcessingAsync(stop);
        await Task.Delay(Timeout.InfiniteTimeSpan, stop).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await processor.StopProcessingAsync(CancellationToken.None);
    }
    // </processor>

    // <pump>
    public static async Task RunPumpAsync(ServiceBusTransport transport, Func<BinaryData, CancellationToken, Task> handle, CancellationToken stop)
    {
        await using var source = await transport.OpenAsync(ServiceBusEntity.Queue("orders"));
        using var scheduler = new PriorityTaskScheduler();            // lease, processing and receive lanes
        await using var pump = new PriorityMessagePump(
            source,
            async (context, cancellationToken) =>
            {
                var message = (ServiceBusLeasedMessage)context.Message;
                if (message.DeliveryCount > 5)
                {
                    await context.DeadLetterAsync("TooManyAttempts", "gave up after 5 deliveries");
                    return;                                          // returning completes; a dead-lettered message is left alone
                }

                await handle(message.Message.Body, cancellationToken); // throwing abandons it for redelivery
            },
            scheduler,
            new MessagePumpOptions { MaxInFlight = 16 });            // locks renewed in the lease lane, ahead of handlers
        await pump.StartAsync(stop);
        await Task.Delay(Timeout.InfiniteTimeSpan, stop).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await pump.StopAsync(CancellationToken.None);                // in-flight messages finish or are abandoned
    }
    // </pump>
}
