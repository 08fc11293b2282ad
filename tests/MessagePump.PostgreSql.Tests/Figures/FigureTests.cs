using System.Diagnostics;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Figures;

/// <summary>
/// The figures of docs/postgresql.md, measured on the test server (printed; nothing about speed is asserted):
/// pump throughput with a no-op handler on one thread, raw transport throughput in batches, and the renew round trip.
/// </summary>
[Collection(RealTimeCollection.Name)]
public class FigureTests(ITestOutputHelper output)
{
    [PostgresFact]
    public async Task PumpThroughput_NoOpHandler_OneThread()
    {
        // One call per message (MaxBatchSize 1, the loop before batches) against the default batches, same run.
        var single = await MeasurePumpAsync(messages: 2_000, maxBatchSize: 1);
        var batched = await MeasurePumpAsync(messages: 20_000, maxBatchSize: MessagePumpOptions.DefaultMaxBatchSize);
        output.WriteLine($"pump, no-op handler, one thread (PriorityAsyncContext), default options: one call per message {single:0} msgs/s; batches {batched:0} msgs/s ({batched / single:0.0}x)");
    }

    private async Task<double> MeasurePumpAsync(int messages, int maxBatchSize)
    {
        await using var transport = PostgresServer.CreateTransport(new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.FromMilliseconds(100) });
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("figure_pump"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        foreach (var chunk in Enumerable.Range(0, messages).Chunk(1000))
        {
            await queue.SendBatchAsync(chunk.Select(i => new PostgreSqlMessage(BitConverter.GetBytes(i))));
        }

        var watch = Stopwatch.StartNew();
        MessagePumpStatistics? stats = null;
        PriorityAsyncContext.Run(async () =>
        {
            await using var pump = new PriorityMessagePump(
                queue,
                (_, _) => Task.CompletedTask,
                PriorityScheduler.Current!,
                new MessagePumpOptions { MaxBatchSize = maxBatchSize, EmptyReceiveDelay = TimeSpan.FromMilliseconds(50) });
            await pump.StartAsync();
            await Bounded.UntilAsync(() => Task.FromResult(pump.GetStatistics().Completed == messages), TimeSpan.FromSeconds(120), $"{messages} completions", TimeSpan.FromMilliseconds(5));
            watch.Stop();
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        stats!.Should().BeEquivalentTo(new { Received = messages, Completed = messages, LeasesLost = 0 });
        (await queue.GetStatisticsAsync()).Pending.Should().Be(0);
        return messages / watch.Elapsed.TotalSeconds;
    }

    [PostgresFact]
    public async Task TransportThroughput_BatchesOf100_OneConsumer()
    {
        const int Messages = 20_000;
        const int BatchSize = 100;
        await using var transport = PostgresServer.CreateTransport(new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.FromMilliseconds(100) });
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("figure_batch"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(60) });
        foreach (var chunk in Enumerable.Range(0, Messages).Chunk(1000))
        {
            await queue.SendBatchAsync(chunk.Select(i => new PostgreSqlMessage(BitConverter.GetBytes(i), $"m{i}")));
        }

        var completed = new HashSet<string>(StringComparer.Ordinal);
        var duplicates = 0;
        var failures = 0;
        var batches = 0;
        var receiving = TimeSpan.Zero;
        var completing = TimeSpan.Zero;
        var watch = Stopwatch.StartNew();
        while (completed.Count + failures < Messages && watch.Elapsed < TimeSpan.FromMinutes(2))
        {
            var start = Stopwatch.GetTimestamp();
            var batch = await queue.ReceiveBatchAsync(BatchSize);
            receiving += Stopwatch.GetElapsedTime(start);
            if (batch.Count == 0)
            {
                continue;
            }

            batches++;
            start = Stopwatch.GetTimestamp();
            var outcomes = await queue.CompleteBatchAsync(batch);
            completing += Stopwatch.GetElapsedTime(start);
            for (var i = 0; i < batch.Count; i++)
            {
                if (outcomes[i] is not null)
                {
                    failures++;
                }
                else if (!completed.Add(batch[i].MessageId))
                {
                    duplicates++;
                }
            }
        }

        watch.Stop();
        output.WriteLine($"transport, one consumer, ReceiveBatchAsync({BatchSize}) + CompleteBatchAsync, durable commits: {completed.Count} messages in {batches} batches, {watch.Elapsed.TotalSeconds:0.00} s = {completed.Count / watch.Elapsed.TotalSeconds:0} msgs/s (receive {receiving.TotalMilliseconds / batches:0.0} ms, complete {completing.TotalMilliseconds / batches:0.0} ms per batch)");
        failures.Should().Be(0, "no lease was lost");
        duplicates.Should().Be(0, "every message was completed once");
        completed.Should().HaveCount(Messages);
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(0, 0, 0), "the queue is empty");
        await transport.DeleteQueueAsync(queue.Name);
    }

    [PostgresFact]
    public async Task RenewRoundTrip()
    {
        const int Renewals = 1000;
        await using var transport = PostgresServer.CreateTransport();
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName("figure_renew"), new PostgreSqlQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        await queue.SendAsync(new byte[] { 1 });
        var message = (await queue.ReceiveAsync())!;
        for (var i = 0; i < 50; i++)
        {
            await message.RenewLockAsync(); // warm the pool and the plan
        }

        var samples = new double[Renewals];
        for (var i = 0; i < Renewals; i++)
        {
            var start = Stopwatch.GetTimestamp();
            await message.RenewLockAsync();
            samples[i] = Stopwatch.GetElapsedTime(start).TotalMilliseconds;
        }

        Array.Sort(samples);
        output.WriteLine($"renew round trip ({Renewals} sequential renewals, durable commit): p50 {samples[Renewals / 2]:0.000} ms, p99 {samples[(Renewals * 99) / 100]:0.000} ms, max {samples[^1]:0.000} ms");
        await message.CompleteAsync();
    }
}
