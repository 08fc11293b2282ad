using System.Collections.Concurrent;

namespace PriorityAsync.MessagePump.Tests.InMemory;

public class InMemoryQueueConcurrencyTests
{
    [Fact]
    public async Task ConcurrentReceivers_NeverHoldTheSameMessage_AndCompleteEachOnce()
    {
        const int messages = 2000;
        const int receivers = 4;
        var queue = new InMemoryTransport().CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromHours(1), MaxDeliveryCount = 100 });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(BitConverter.GetBytes(i), $"m{i}");
        }

        var held = new ConcurrentDictionary<string, int>();
        var completed = new ConcurrentBag<string>();
        var overlaps = 0;
        using var start = new Barrier(receivers);
        var threads = Enumerable.Range(0, receivers).Select(r => new Thread(() =>
        {
            start.SignalAndWait();
            var random = new Random(r);
            while (queue.ReceiveAsync().GetAwaiter().GetResult() is { } message)
            {
                if (!held.TryAdd(message.MessageId, r))
                {
                    Interlocked.Increment(ref overlaps);
                }

                var abandon = random.Next(3) == 0;
                held.TryRemove(message.MessageId, out _);
                if (abandon)
                {
                    message.AbandonAsync().GetAwaiter().GetResult();
                }
                else
                {
                    message.CompleteAsync().GetAwaiter().GetResult();
                    completed.Add(message.MessageId);
                }
            }
        })).ToList();

        threads.ForEach(t => t.Start());
        await Task.Run(() => threads.ForEach(t => t.Join()));

        overlaps.Should().Be(0);
        completed.Should().OnlyHaveUniqueItems().And.HaveCount(messages);
        var stats = queue.GetStatistics();
        stats.Should().BeEquivalentTo(new { Sent = messages, Completed = messages, InFlight = 0, Available = 0, DeadLettered = 0, LeaseLostErrors = 0 });
        stats.Received.Should().Be(messages + stats.Abandoned);
        stats.ShouldBeConsistent();
    }
}
