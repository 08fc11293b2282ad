using PriorityAsync.MessagePump;

namespace PriorityAsync.QuickStarts;

/// <summary>
/// The quick start of docs/message-pump.md, the one copy: compiled and run by MessagePump.Tests (DocsTests keeps it
/// identical to the page) and by the package consumer app against the packed packages (.ci/consumer.sh), both through
/// QuickStart.projitems.
/// </summary>
internal static class QuickStartSample
{
    public static async Task<InMemoryQueueStatistics> RunAsync()
    {
        // <quick-start>
        var broker = new InMemoryTransport();
        var orders = broker.CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        for (var i = 0; i < 10; i++)
        {
            orders.Send(BitConverter.GetBytes(i));
        }

        await using var scheduler = new PriorityTaskScheduler();
        await using var pump = new PriorityMessagePump(
            orders,
            async (context, cancellationToken) =>
            {
                await Task.Delay(TimeSpan.FromMilliseconds(5), cancellationToken); // I/O: the thread is free meanwhile
                Thread.SpinWait(10_000);                                          // CPU
                await PriorityScheduler.YieldIfNeeded();                           // due lease renewals go first
            },
            scheduler);

        await pump.StartAsync();
        while (orders.GetStatistics().Completed < 10)
        {
            await Task.Delay(10);
        }

        await pump.StopAsync();
        Console.WriteLine($"completed {orders.GetStatistics().Completed} of 10");
        // </quick-start>
        return orders.GetStatistics();
    }
}
