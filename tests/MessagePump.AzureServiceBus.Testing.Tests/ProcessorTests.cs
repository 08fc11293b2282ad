using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;

namespace MessagePump.AzureServiceBus.Testing.Tests;

public sealed class ProcessorTests
{
    [Fact]
    public async Task A_processor_with_auto_lock_renewal_keeps_a_long_handler_locked_and_completes_once()
    {
        // The processor schedules renewals on the real clock from LockedUntil, so this broker runs on the system clock.
        // The handler holds the message until the broker has answered a renewal: an ordering, no time budget.
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("processed", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(5) });
        queue.Send("work"u8.ToArray(), messageId: "w");
        await using var client = new ServiceBusClient(broker.ConnectionString, BrokerHarness.ClientOptions());
        await using var processor = client.CreateProcessor("processed", new ServiceBusProcessorOptions
        {
            MaxConcurrentCalls = 1,
            AutoCompleteMessages = true,
            MaxAutoLockRenewalDuration = TimeSpan.FromMinutes(5),
        });
        var handled = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
        var errors = new List<Exception>();
        processor.ProcessMessageAsync += async args =>
        {
            using var bound = new CancellationTokenSource(BrokerHarness.HangBound);
            while (queue.RenewCount == 0)
            {
                await Task.Delay(50, bound.Token);
            }

            handled.TrySetResult(args.Message.DeliveryCount);
        };
        processor.ProcessErrorAsync += args =>
        {
            lock (errors)
            {
                errors.Add(args.Exception);
            }

            return Task.CompletedTask;
        };

        await processor.StartProcessingAsync();
        var deliveryCount = await handled.Task.WaitAsync(BrokerHarness.HangBound);
        using var bound = new CancellationTokenSource(BrokerHarness.HangBound);
        while (queue.CompletionsOf("w") == 0)
        {
            await Task.Delay(20, bound.Token);
        }

        await processor.StopProcessingAsync();

        deliveryCount.Should().Be(1);
        queue.CompletionsOf("w").Should().Be(1);
        queue.RenewCount.Should().BeGreaterThanOrEqualTo(1);
        errors.Should().BeEmpty();
    }
}
