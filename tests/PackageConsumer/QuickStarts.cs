using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.Hosting;

namespace PriorityAsync.PackageConsumer;

/// <summary>docs/message-pump.md's quick start, as written there.</summary>
internal static class MessagePumpQuickStart
{
    public static async Task<InMemoryQueueStatistics> RunAsync()
    {
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
        return orders.GetStatistics();
    }
}

/// <summary>The Hosting package without a host: the hosted service started and stopped as a host would.</summary>
internal static class HostedPump
{
    public static async Task<long> RunAsync()
    {
        var queue = new InMemoryTransport().CreateQueue("hosted");
        for (var i = 0; i < 3; i++)
        {
            queue.Send(BitConverter.GetBytes(i));
        }

        await using var service = new MessagePumpHostedService(queue, (context, cancellationToken) => Task.Delay(1, cancellationToken));
        await service.StartAsync(CancellationToken.None);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (queue.GetStatistics().Completed < 3 && !timeout.IsCancellationRequested)
        {
            await Task.Delay(10);
        }

        await service.StopAsync(CancellationToken.None);
        return queue.GetStatistics().Completed;
    }
}
