using System.Collections.Concurrent;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Transport;

/// <summary>Competing receivers, on separate connection pools as separate processes would be, never get the same message.</summary>
public class ConcurrencyTests
{
    [PostgresFact]
    public async Task ConcurrentReceivers_NeverGetTheSameMessage_AndTakeEveryMessageOnce()
    {
        const int Messages = 1000;
        const int Receivers = 8;
        await using var sender = PostgresServer.CreateTransport();
        var name = PostgresServer.UniqueName("compete");
        var queue = await sender.CreateQueueAsync(name, new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromMinutes(5) });
        await queue.SendBatchAsync(Enumerable.Range(0, Messages).Select(i => new PostgreSqlMessage(BitConverter.GetBytes(i), $"m{i}")));

        var taken = new ConcurrentDictionary<string, int>();
        var transports = new List<PostgreSqlTransport>();
        for (var i = 0; i < Receivers / 2; i++)
        {
            transports.Add(PostgresServer.CreateTransport());
        }

        try
        {
            var receivers = Enumerable.Range(0, Receivers).Select(i => Task.Run(async () =>
            {
                var mine = await transports[i % transports.Count].GetQueueAsync(name);
                while (await mine.ReceiveAsync() is { } message)
                {
                    taken.AddOrUpdate(message.MessageId, 1, (_, n) => n + 1);
                    message.DeliveryCount.Should().Be(1);
                    await message.CompleteAsync();
                }
            }));
            await Task.WhenAll(receivers).WaitAsync(TimeSpan.FromSeconds(60));
        }
        finally
        {
            foreach (var transport in transports)
            {
                await transport.DisposeAsync();
            }
        }

        taken.Should().HaveCount(Messages).And.OnlyContain(pair => pair.Value == 1);
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(0, 0, 0));
    }
}
