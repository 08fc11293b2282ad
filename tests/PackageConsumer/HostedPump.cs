using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump;

namespace PriorityAsync.PackageConsumer;

/// <summary>The Hosting package without a host: the pump registered with <c>AddMessagePump</c>, its hosted service started and stopped as a host would.</summary>
internal static class HostedPump
{
    public static async Task<long> RunAsync()
    {
        var queue = new InMemoryTransport().CreateQueue("hosted");
        for (var i = 0; i < 3; i++)
        {
            queue.Send(BitConverter.GetBytes(i));
        }

        var services = new ServiceCollection();
        services.AddMessagePump(_ => queue, (context, cancellationToken) => Task.Delay(1, cancellationToken));
        await using var provider = services.BuildServiceProvider();
        var service = provider.GetServices<IHostedService>().Single();
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
