// The page docs/keep-your-servicebusprocessor.md shows this file's usings and class whole, as a file to paste: the
// usings sit inside the namespace so that they and the class are one piece, and the namespace is outside PriorityAsync
// so that every using the page shows is one the class needs.
namespace KeepProcessorSamples.Before
{
    using Azure.Messaging.ServiceBus;

    public static class OrdersConsumer
    {
        public static async Task RunAsync(ServiceBusClient client, Func<BinaryData, CancellationToken, Task> handle, CancellationToken stop)
        {
            await using var processor = client.CreateProcessor("orders", new ServiceBusProcessorOptions
            {
                MaxConcurrentCalls = 16,
            });
            processor.ProcessMessageAsync += async args =>
            {
                await handle(args.Message.Body, args.CancellationToken);
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
}
