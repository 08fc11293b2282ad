using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.Hosting;

namespace PriorityAsync.PackageConsumer;

/// <summary>README.md's quick start, as written there, with the two methods it leaves to the reader.</summary>
internal static class ReadmeQuickStart
{
    private static int renewals;

    public static int Run()
    {
        PriorityAsyncContext.Run(async () =>                       // one thread, like a WinForms UI thread
        {
            var scheduler = PriorityScheduler.Current!;
            _ = scheduler.GetLane(LanePriority.Lease).Run(KeepLeaseAsync);      // always runs first
            await scheduler.GetLane(LanePriority.Processing).Run(ProcessAsync); // runs when no lease work is ready
        });
        return renewals;
    }

    private static async Task KeepLeaseAsync()
    {
        for (var i = 0; i < 3; i++)
        {
            renewals++;
            await Task.Delay(TimeSpan.FromMilliseconds(5));
        }
    }

    private static async Task ProcessAsync()
    {
        for (var chunk = 0; chunk < 5; chunk++)
        {
            Thread.SpinWait(10_000);                 // CPU
            await Task.Delay(TimeSpan.FromMilliseconds(5));  // I/O
        }
    }
}

/// <summary>docs/message-pump.md's quick start, as written there.</summary>
internal static class MessagePumpQuickStart
{
    public static async Task<InMemoryQueueStatistics> RunAsync()
    {
        var broker = new InMemoryLeaseBroker();
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
        return orders.GetStatistics();
    }
}

/// <summary>The Hosting package without a host: the hosted service started and stopped as a host would.</summary>
internal static class HostedPump
{
    public static async Task<long> RunAsync()
    {
        var queue = new InMemoryLeaseBroker().CreateQueue("hosted");
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
