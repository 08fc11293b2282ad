using System.Collections.Concurrent;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary>
/// <see cref="ServiceBusPumpProcessor"/> end to end with the real SDK client against the test broker: the settlement
/// calls of its handler arguments, as a <see cref="ServiceBusProcessor"/> user writes them. Outcomes only, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class ProcessorSettlementTests(ITestOutputHelper output)
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task Auto_complete_explicit_complete_and_dead_letter_with_description_each_end_the_message_once()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 3, LockDuration);
        await using var processor = h.Create(async args =>
        {
            switch (args.Message.MessageId)
            {
                case "m1":
                    await args.CompleteMessageAsync(args.Message);
                    break;
                case "m2":
                    await args.DeadLetterMessageAsync(args.Message, "Poison", "bad body");
                    break;
                default:
                    break; // m0: returns, auto-completed
            }
        });

        await processor.StartProcessingAsync();
        processor.IsProcessing.Should().BeTrue();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 2 && h.Queue.DeadLetterCount == 1, "two completions and a dead letter");
        await processor.StopProcessingAsync();

        processor.IsProcessing.Should().BeFalse();
        h.Queue.CompletionsOf("m0").Should().Be(1);
        h.Queue.CompletionsOf("m1").Should().Be(1);
        var deadLetter = h.Queue.DeadLetters.Should().ContainSingle().Subject;
        deadLetter.Reason.Should().Be("Poison");
        deadLetter.Description.Should().Be("bad body");
        h.Queue.LockedCount.Should().Be(0);
        h.Errors.Should().BeEmpty();
        var stats = processor.GetStatistics()!;
        output.WriteLine(stats.ToString());
        stats.Completed.Should().Be(2);
        stats.DeadLettered.Should().Be(1);
        stats.LeasesLost.Should().Be(0);
    }

    [Fact]
    public async Task Settling_twice_throws_like_the_SDK_and_another_message_is_refused_and_the_first_settlement_stands()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 1, LockDuration);
        var outcomes = new ConcurrentQueue<Exception>();
        var other = ServiceBusModelFactory.ServiceBusReceivedMessage(messageId: "other");
        await using var processor = h.Create(async args =>
        {
            await args.CompleteMessageAsync(args.Message);
            outcomes.Enqueue(await Record(() => args.CompleteMessageAsync(args.Message)));
            outcomes.Enqueue(await Record(() => args.AbandonMessageAsync(args.Message)));
            outcomes.Enqueue(await Record(() => args.DeadLetterMessageAsync(args.Message, "late")));
            outcomes.Enqueue(await Record(() => args.CompleteMessageAsync(other)));
            outcomes.Enqueue(await Record(() => args.CompleteMessageAsync(null!)));
            outcomes.Enqueue(await Record(() => args.DeadLetterMessageAsync(args.Message, " ")));
        });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => outcomes.Count == 6, "the handler's six attempts");
        await processor.StopProcessingAsync();

        var list = outcomes.ToArray();
        list[0].Should().BeOfType<InvalidOperationException>().Which.Message.Should().Contain("already settled");
        list[1].Should().BeOfType<InvalidOperationException>();
        list[2].Should().BeOfType<InvalidOperationException>();
        list[3].Should().BeOfType<ArgumentException>().Which.ParamName.Should().Be("message");
        list[4].Should().BeOfType<ArgumentNullException>().Which.ParamName.Should().Be("message");
        list[5].Should().BeOfType<ArgumentException>().Which.ParamName.Should().Be("deadLetterReason");
        h.Queue.CompletionsOf("m0").Should().Be(1);
        h.Queue.DeadLetterCount.Should().Be(0);
        h.Queue.LockedCount.Should().Be(0);
        h.Errors.Should().BeEmpty();
    }

    [Fact]
    public async Task Without_auto_complete_a_message_left_unsettled_is_abandoned_at_once_and_redelivered()
    {
        await using var h = await ProcessorHarness.StartAsync(messages: 1, LockDuration);
        var deliveries = new ConcurrentQueue<int>();
        await using var processor = h.Create(
            async args =>
            {
                deliveries.Enqueue(args.Message.DeliveryCount);
                if (args.Message.DeliveryCount >= 2)
                {
                    await args.CompleteMessageAsync(args.Message);
                }
            },
            new ServiceBusPumpProcessorOptions { AutoCompleteMessages = false });

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => h.Queue.CompletedCount == 1, "the completion of the redelivery");
        await processor.StopProcessingAsync();

        deliveries.Should().Equal(1, 2);
        var stats = processor.GetStatistics()!;
        stats.Abandoned.Should().Be(1);
        stats.Completed.Should().Be(1);
        stats.LeasesLost.Should().Be(0);
        h.Errors.Should().BeEmpty();
    }

    private static async Task<Exception> Record(Func<Task> settle)
    {
        try
        {
            await settle();
        }
        catch (Exception ex)
        {
            return ex;
        }

        return new InvalidOperationException("no exception");
    }
}
