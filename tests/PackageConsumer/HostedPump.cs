using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.Hosting;

namespace PriorityAsync.PackageConsumer;

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
