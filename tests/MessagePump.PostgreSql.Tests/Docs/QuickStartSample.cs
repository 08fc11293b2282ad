namespace PriorityAsync.MessagePump.PostgreSql.Tests.Docs;

/// <summary>The quick start of docs/postgresql.md, compiled and run; <see cref="PostgreSqlDocsTests"/> keeps the two identical.</summary>
internal static class QuickStartSample
{
    public static async Task<PostgreSqlQueueStatistics> RunAsync(string connectionString)
    {
        // <quick-start>
        await using var transport = new PostgreSqlTransport(connectionString);
        var orders = await transport.CreateQueueAsync("orders", new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        await orders.SendBatchAsync(Enumerable.Range(0, 10).Select(i => new PostgreSqlMessage(BitConverter.GetBytes(i))));

        PriorityAsyncContext.Run(async () =>                                    // one thread
        {
            await using var pump = new PriorityMessagePump(
                orders,
                async (context, cancellationToken) => await Task.Delay(5, cancellationToken),
                PriorityScheduler.Current!);
            await pump.StartAsync();
            while ((await orders.GetStatisticsAsync()).Pending > 0)
            {
                await Task.Delay(50);
            }

            await pump.StopAsync();                                              // nothing stays locked
        });
        // </quick-start>

        return await orders.GetStatisticsAsync();
    }
}
