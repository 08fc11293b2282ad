using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary>
/// The "after" of docs/azure-service-bus.md, "Moving from ServiceBusProcessor": the processor consumer of
/// <c>Docs/ProcessorMigrationSample.RunProcessorAsync</c> on <see cref="ServiceBusPumpProcessor"/>, the creating line changed.
/// </summary>
internal static class PumpProcessorMigrationSample
{
    public static async Task RunPumpProcessorAsync(ServiceBusClient client, Func<BinaryData, CancellationToken, Task> handle, CancellationToken stop)
    {
        await using var processor = client.CreatePumpProcessor("orders", new ServiceBusPumpProcessorOptions
        {
            MaxConcurrentCalls = 16,
            AutoCompleteMessages = false,
            MaxAutoLockRenewalDuration = TimeSpan.FromMinutes(10),   // a handler's time limit; its lock is renewed in the lease lane
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
}
