using System.Collections.Concurrent;
using PriorityAsync.MessagePump.PostgreSql.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Pump;

/// <summary>
/// The seed article's scenario on the real server, on ONE thread (<see cref="PriorityAsyncContext"/>) and the real
/// clock, time-scaled: each message is 8 × (150 ms of CPU + 50 ms of I/O), locks last 2 s. The naive consumer (one
/// FIFO lane, greedy receive, renew every 1.4 s) loses its leases and the server redelivers; the pump keeps every lease.
/// </summary>
[Collection(RealTimeCollection.Name)]
public class SingleThreadSeedTests(ITestOutputHelper output)
{
    private const int Messages = 6;
    private const int Steps = 8;
    private static readonly TimeSpan Cpu = TimeSpan.FromMilliseconds(150);
    private static readonly TimeSpan Io = TimeSpan.FromMilliseconds(50);
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(2);

    [PostgresFact]
    public async Task Pump_CpuHeavyHandlers_OneThread_RealServer_CompletesEachMessageOnce_WithNoLeaseLost()
    {
        await using var transport = PostgresServer.CreateTransport(new PostgreSqlTransportOptions { ReceiveWaitTime = TimeSpan.FromMilliseconds(200), PollInterval = TimeSpan.FromMilliseconds(100) });
        var queue = await CreateQueueAsync(transport, "seed_pump");
        var handled = new ConcurrentDictionary<string, int>();
        var deliveries = new ConcurrentBag<int>();
        MessagePumpStatistics? stats = null;
        var started = DateTime.UtcNow;

        // "No lease lost" holds when the process was never held back as long as the renewal margin (the pump renews with
        // half the 2 s lock left, and a renewal may wait for one 150 ms slice); a longer stop, which the probe measures, is
        // one no code survives on a loaded machine, and then only the exactly-once outcomes are asserted.
        var margin = (LockDuration / 2) - Cpu;
        using var probe = PauseProbe.Start();

        PriorityAsyncContext.Run(async () =>
        {
            await using var pump = new PriorityMessagePump(
                queue,
                async (context, cancellationToken) =>
                {
                    deliveries.Add(context.Message.DeliveryCount);
                    for (var i = 0; i < Steps; i++)
                    {
                        CpuBound.Hold(Cpu);
                        await Task.Delay(Io, cancellationToken);
                    }

                    handled.AddOrUpdate(context.Message.MessageId, 1, (_, n) => n + 1);
                },
                PriorityScheduler.Current!,
                new MessagePumpOptions { Name = "pg-seed", EmptyReceiveDelay = TimeSpan.FromMilliseconds(100) });
            await pump.StartAsync();
            await Bounded.UntilAsync(async () => (await queue.GetStatisticsAsync()).Pending == 0, TimeSpan.FromSeconds(30), "the pump to drain the queue", TimeSpan.FromMilliseconds(200));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        var pause = probe.LongestPause;
        output.WriteLine($"pump: {stats}\nelapsed: {DateTime.UtcNow - started}\nlongest stop of the process: {pause.TotalMilliseconds:0} ms (margin {margin.TotalMilliseconds:0} ms)");
        stats!.Renewals.Should().BePositive("each message (1.6 s of work, sharing the thread) outlives its 2 s lock");
        stats.Should().BeEquivalentTo(new { Abandoned = 0, InFlight = 0 });
        handled.Should().HaveCount(Messages);
        (await queue.GetStatisticsAsync()).Should().Be(new PostgreSqlQueueStatistics(0, 0, 0), "every message was completed");
        if (pause < margin)
        {
            stats.LeasesLost.Should().Be(0);
            stats.Should().BeEquivalentTo(new { Received = Messages, Completed = Messages });
            handled.Should().OnlyContain(pair => pair.Value == 1);
            deliveries.Should().OnlyContain(count => count == 1, "the server never redelivered");
        }
    }

    [PostgresFact]
    public async Task NaiveConsumer_SameHandler_OneLane_RealServer_LosesLeases_AndTheServerRedelivers()
    {
        await using var transport = PostgresServer.CreateTransport();
        var queue = await CreateQueueAsync(transport, "seed_naive");
        var runs = new ConcurrentDictionary<string, int>();
        var maxDelivery = 0;
        var stopAt = DateTime.UtcNow + TimeSpan.FromSeconds(9);
        NaiveConsumer? consumer = null;
        var source = new DeliveryRecorder(queue, count => maxDelivery = Math.Max(maxDelivery, count));

        PriorityAsyncContext.Run(
            async () =>
            {
                consumer = new NaiveConsumer(
                    source,
                    async (time, _) =>
                    {
                        // The seed's work; after the time limit it returns at once so that the test ends.
                        for (var i = 0; i < Steps && DateTime.UtcNow < stopAt; i++)
                        {
                            CpuBound.Hold(Cpu);
                            await Task.Delay(Io, time);
                        }
                    },
                    PriorityScheduler.Current!.TimeProvider,
                    renewEvery: TimeSpan.FromMilliseconds(1400));
                source.OnStart = id => runs.AddOrUpdate(id, 1, (_, n) => n + 1);
                await consumer.RunAsync(() => DateTime.UtcNow >= stopAt);
            },
            new PrioritySchedulerOptions { Lanes = [new LaneOptions("Everything")] });

        var after = await queue.GetStatisticsAsync();
        output.WriteLine($"naive: {consumer!.HandlerRuns} handler runs, {consumer.CompleteLeaseLost} completes failed (lease lost), highest delivery count {maxDelivery}, "
            + $"deliveries per message: {string.Join(' ', runs.OrderBy(p => p.Key).Select(p => $"{p.Key}={p.Value}"))}\nserver after: {after}");
        consumer.CompleteLeaseLost.Should().BePositive("renewals wait behind CPU-heavy continuations in one FIFO lane, and finished work is thrown away");
        maxDelivery.Should().BeGreaterThan(1, "the server redelivered messages whose lock expired");
        consumer.HandlerRuns.Should().BeGreaterThan(Messages, "duplicates: the same message was processed more than once");
        runs.Values.Max().Should().BeGreaterThan(1, "the same message was delivered and processed again");
        await transport.DeleteQueueAsync(queue.Name);
    }

    private static async Task<PostgreSqlQueue> CreateQueueAsync(PostgreSqlTransport transport, string prefix)
    {
        var queue = await transport.CreateQueueAsync(PostgresServer.UniqueName(prefix), new PostgreSqlQueueOptions { LockDuration = LockDuration, MaxDeliveryCount = 3 });
        await queue.SendBatchAsync(Enumerable.Range(0, Messages).Select(i => new PostgreSqlMessage(BitConverter.GetBytes(i), $"m{i}")));
        return queue;
    }

    /// <summary>Passes receives through and records each delivery's count and start.</summary>
    private sealed class DeliveryRecorder(IMessageSource inner, Action<int> onDelivery) : IMessageSource
    {
        public Action<string>? OnStart { get; set; }

        public TimeSpan? LockDuration => inner.LockDuration;

        public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
        {
            var message = await inner.ReceiveAsync(cancellationToken);
            if (message is not null)
            {
                onDelivery(message.DeliveryCount);
                OnStart?.Invoke(message.MessageId);
            }

            return message;
        }
    }
}
