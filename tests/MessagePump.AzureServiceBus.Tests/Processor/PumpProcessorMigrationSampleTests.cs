using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary>The "after" of docs/azure-service-bus.md, "Moving from ServiceBusProcessor", runs against the test broker.</summary>
[Collection(RealTimeCollection.Name)]
public sealed class PumpProcessorMigrationSampleTests
{
    [Fact]
    public async Task The_migrated_consumer_completes_a_message_and_dead_letters_one_delivered_too_often()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30), MaxDeliveryCount = 10 });
        queue.Send("a"u8.ToArray(), "a");
        queue.Send("b"u8.ToArray(), "b");
        using var stop = new CancellationTokenSource();
        var handled = 0;

        var run = PumpProcessorMigrationSample.RunPumpProcessorAsync(
            sb.Transport.Client,
            (body, _) =>
            {
                Interlocked.Increment(ref handled);
                return body.ToString() == "b" ? throw new InvalidOperationException("b always fails") : Task.CompletedTask;
            },
            stop.Token);
        await ProcessorHarness.UntilAsync(() => queue.CompletedCount == 1 && queue.DeadLetterCount == 1, "a completed, b dead-lettered");
        await stop.CancelAsync();
        await run.WaitAsync(SbHarness.HangBound);

        handled.Should().Be(6, "a once, b on its first five deliveries");
        queue.CompletionsOf("a").Should().Be(1);
        queue.DeadLetters.Should().ContainSingle().Which.Reason.Should().Be("TooManyAttempts");
        queue.LockedCount.Should().Be(0);
    }
}
