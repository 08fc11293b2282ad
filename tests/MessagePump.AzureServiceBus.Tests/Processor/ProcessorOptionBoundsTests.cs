using System.Collections.Concurrent;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary>
/// The bounds of <see cref="ServiceBusPumpProcessorOptions"/> that the XML docs state, used as a user would: the largest
/// <c>MaxConcurrentCalls</c> and a zero <c>ShutdownTimeout</c>. Outcomes only, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class ProcessorOptionBoundsTests
{
    [Fact]
    public async Task MaxConcurrentCalls_of_int_MaxValue_is_a_cap_not_a_target_and_every_message_completes_once()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 5, TimeSpan.FromSeconds(30));
        await using var processor = h.Create(_ => Task.CompletedTask, new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = int.MaxValue });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 5, "five completions");
        await processor.StopProcessingAsync();

        for (var i = 0; i < 5; i++)
        {
            h.Queue.CompletionsOf($"m{i}").Should().Be(1);
        }

        processor.GetStatistics()!.Completed.Should().Be(5);
        h.Queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_zero_ShutdownTimeout_cancels_running_handlers_at_once_abandons_their_messages_and_leaves_nothing_locked()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 2, TimeSpan.FromSeconds(30));
        var entered = new ConcurrentQueue<string>();
        var canceled = new ConcurrentQueue<string>();
        await using var processor = h.Create(
            async args =>
            {
                entered.Enqueue(args.Message.MessageId);
                try
                {
                    await Task.Delay(Timeout.InfiniteTimeSpan, args.CancellationToken);
                }
                catch (OperationCanceledException)
                {
                    canceled.Enqueue(args.Message.MessageId);
                    throw;
                }
            },
            new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 2, ShutdownTimeout = TimeSpan.Zero });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => entered.Count == 2, "both handlers running");
        await processor.StopProcessingAsync();

        // A zero timeout waits for no handler: each token is canceled at the stop, and each handler sees it when its
        // continuation runs, which may be just after the stop returned.
        await ProcessorHarness.UntilAsync(() => canceled.Count == 2, "both handlers to see their token canceled");
        canceled.Should().BeEquivalentTo(entered, "a zero timeout waits for no handler: each token is canceled at the stop");
        h.Queue.LockedCount.Should().Be(0, "the stop abandons what it canceled");
        h.Queue.CompletedCount.Should().Be(0);
        processor.GetStatistics()!.Abandoned.Should().Be(2);
        processor.GetStatistics()!.HandlerFailures.Should().Be(0, "a handler canceled by the stop is not a failure, as with the SDK");
    }
}
