using PriorityAsync.MessagePump;
using PriorityAsync.Reliability.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.Reliability.Tests.Soak;

/// <summary>
/// A long run on virtual time: a million messages (100 000 in the fast set) through one pump on one thread, the queue
/// topped up as it drains, with the managed heap measured at checkpoints: it must stay flat.
/// </summary>
[Collection(HeapMeasurementCollection.Name)]
public class SoakTests(ITestOutputHelper output)
{
    private const int Batch = 1_000;

    [Fact]
    public void MillionMessages_OnVirtualTime_CompleteOnce_WithTheHeapFlat()
    {
        var total = ReliabilitySettings.Long ? 1_000_000 : 100_000;
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("soak", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30), Latency = TimeSpan.FromMilliseconds(1) });
        var heap = new List<long>();
        MessagePumpStatistics? stats = null;
        PriorityAsyncContext.Run(
            async () =>
            {
                var scheduler = PriorityScheduler.Current!;
                var pump = new PriorityMessagePump(
                    queue,
                    (context, token) => Task.Delay(TimeSpan.FromMilliseconds(5), context.TimeProvider, token),
                    scheduler,
                    new MessagePumpOptions { MaxInFlight = 64, EmptyReceiveDelay = TimeSpan.FromMilliseconds(10) });
                await pump.StartAsync();
                var sent = 0;
                while (queue.GetStatistics().Completed < total)
                {
                    if (sent < total && queue.GetStatistics().Available < Batch)
                    {
                        for (var i = 0; i < Batch; i++)
                        {
                            queue.Send(new byte[16]);
                        }

                        sent += Batch;
                        if (sent % (total / 10) == 0)
                        {
                            heap.Add(GC.GetTotalMemory(forceFullCollection: true));
                        }
                    }

                    await Task.Delay(TimeSpan.FromMilliseconds(50), scheduler.TimeProvider);
                }

                await pump.StopAsync();
                stats = pump.GetStatistics();
            },
            new PrioritySchedulerOptions { TimeProvider = clock });

        output.WriteLine($"{total} messages, {clock.Elapsed} of virtual time; heap at each tenth (KiB): {string.Join(", ", heap.Select(h => h / 1024))}");
        var broker = queue.GetStatistics();
        broker.Completed.Should().Be(total);
        broker.Received.Should().Be(total, "no message was delivered twice");
        stats!.LeasesLost.Should().Be(0);
        heap.Should().HaveCountGreaterThanOrEqualTo(5);
        var settled = heap.Skip(2).ToArray(); // after warm-up
        (settled.Max() - settled.Min()).Should().BeLessThan(8L * 1024 * 1024, $"the heap stays flat (KiB: {string.Join(", ", heap.Select(h => h / 1024))})");
    }
}
