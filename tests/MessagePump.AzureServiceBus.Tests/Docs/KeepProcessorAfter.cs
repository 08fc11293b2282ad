// The page docs/keep-your-servicebusprocessor.md shows this file's usings and class whole, as a file to paste: the
// usings sit inside the namespace so that they and the class are one piece, and the namespace is outside PriorityAsync
// so that every using the page shows is one the class needs.
namespace KeepProcessorSamples.After
{
    using Azure.Messaging.ServiceBus;
    using PriorityAsync;
    using PriorityAsync.MessagePump;
    using PriorityAsync.MessagePump.AzureServiceBus;

    public static class OrdersConsumer
    {
        public static async Task RunAsync(ServiceBusClient client, Func<BinaryData, CancellationToken, Task> handle, CancellationToken stop)
        {
            using var scheduler = new PriorityTaskScheduler();            // its reserved worker runs the keeper
            await using var keeper = new LeaseKeeper(scheduler);
            await using var processor = client.CreateProcessor("orders", new ServiceBusProcessorOptions
            {
                MaxConcurrentCalls = 16,
                MaxAutoLockRenewalDuration = TimeSpan.Zero,               // the keeper renews, not a loop on the pool
            });
            processor.ProcessMessageAsync += async args =>
            {
                using var lease = keeper.Keep(args, processor);
                await handle(args.Message.Body, lease.LeaseLostToken);    // canceled if the lock is lost
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
