using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.PostgreSql;

namespace PriorityAsync.PackageConsumer;

/// <summary>
/// The PostgreSQL package: with a server (<c>PRIORITYASYNC_POSTGRES</c>, which .ci/run exports), three messages sent
/// and pumped through a queue of their own, deleted afterwards; without one, a transport built and disposed (Npgsql
/// connects lazily, so nothing is contacted). Either way the transport's code is in the NativeAOT binary.
/// </summary>
internal static class PostgreSqlRoundTrip
{
    public static async Task<string> RunAsync(string? connectionString)
    {
        if (string.IsNullOrEmpty(connectionString))
        {
            await using var unused = new PostgreSqlTransport("Host=127.0.0.1;Database=none");
            return "transport built and disposed (no PRIORITYASYNC_POSTGRES: no server contacted)";
        }

        await using var transport = new PostgreSqlTransport(connectionString);
        await transport.MigrateAsync();
        var name = $"consumer_{Guid.NewGuid():N}"; // queue names: ^[a-z_][a-z0-9_]{0,47}$
        var queue = await transport.CreateQueueAsync(name);
        try
        {
            for (var i = 0; i < 3; i++)
            {
                await queue.SendAsync(BitConverter.GetBytes(i));
            }

            await using var scheduler = new PriorityTaskScheduler();
            await using var pump = new PriorityMessagePump(queue, (context, cancellationToken) => Task.CompletedTask, scheduler);
            await pump.StartAsync();
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
            while (pump.GetStatistics().Completed < 3 && !timeout.IsCancellationRequested)
            {
                await Task.Delay(10);
            }

            await pump.StopAsync();
            var completed = pump.GetStatistics().Completed;
            return completed == 3 ? "3 of 3 messages completed on the server" : throw new InvalidOperationException($"{completed} of 3 completed");
        }
        finally
        {
            await transport.DeleteQueueAsync(name);
        }
    }
}
