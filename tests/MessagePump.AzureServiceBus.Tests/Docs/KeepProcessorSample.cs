using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>
/// The other samples of docs/keep-your-servicebusprocessor.md (its before/after are KeepProcessorBefore.cs and
/// KeepProcessorAfter.cs): a handler that settles through the handle, and a receiver loop. <see cref="KeepProcessorSampleTests"/>
/// runs them against the test broker.
/// </summary>
internal static class KeepProcessorSample
{
    internal static class SettleThroughHandle
    {
        /// <summary>Hands <paramref name="processor"/> a handler that keeps each lock and completes the message through the handle.</summary>
        public static void Attach(ServiceBusProcessor processor, LeaseKeeper keeper, Func<BinaryData, CancellationToken, Task> handle)
        {
            processor.ProcessMessageAsync += async args =>
            {
                using var lease = keeper.Keep(args, processor);
                await handle(args.Message.Body, lease.LeaseLostToken);
                await lease.CompleteAsync(CancellationToken.None);            // not args.CompleteMessageAsync: the keeper sees it
            };
        }
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
