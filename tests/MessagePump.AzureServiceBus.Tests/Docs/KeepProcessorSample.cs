using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>
/// The before/after of docs/keep-your-servicebusprocessor.md: a <see cref="ServiceBusProcessor"/> consumer, and the same
/// consumer with its locks kept by a <see cref="LeaseKeeper"/>. Both compile; <see cref="KeepProcessorSampleTests"/>
/// counts the lines that differ and runs the kept side against the test broker.
/// </summary>
internal static class KeepProcessorSample
{
    internal static class Before
    {
        // <before>
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
        // </before>
    }

    internal static class After
    {
        // <after>
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
        // </after>
    }

    internal static class Receiver
    {
        // <receiver>
        public static async Task RunAsync(ServiceBusReceiver receiver, LeaseKeeper keeper, Func<BinaryData, CancellationToken, Task> handle, CancellationToken stop)
        {
            await receiver.PeekMessageAsync(long.MaxValue, stop);         // opens the $management link renewals use, before a lock runs
            while (!stop.IsCancellationRequested)
            {
                var message = await receiver.ReceiveMessageAsync(TimeSpan.FromSeconds(5), stop);
                if (message is null)
                {
                    continue;
                }

                using var lease = keeper.Keep(receiver, message);          // already lost if its lock is gone
                if (!lease.IsLost)
                {
                    try
                    {
                        await handle(message.Body, lease.LeaseLostToken);
                        await lease.CompleteAsync(CancellationToken.None); // stops renewing, then completes
                        continue;
                    }
                    catch (Exception) when (lease.IsLost)
                    {
                        // The keeper reported the loss and canceled the token.
                    }
                }

                await SettleLostAsync(receiver, message);                  // the broker delivers it again
            }
        }

        // A delivery whose lock is gone is still settled: its link credit comes back only then, and with PrefetchCount a
        // receiver whose credit is all held by such deliveries receives nothing more. The broker answers MessageLockLost.
        private static async Task SettleLostAsync(ServiceBusReceiver receiver, ServiceBusReceivedMessage message)
        {
            try
            {
                await receiver.AbandonMessageAsync(message);
            }
            catch (ServiceBusException ex) when (ex.Reason == ServiceBusFailureReason.MessageLockLost)
            {
                // As expected: the lock is gone.
            }
        }
        // </receiver>
    }
}
