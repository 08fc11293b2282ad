using System.Diagnostics;
using System.Globalization;
using PriorityAsync.Benchmarks.LeaseLatency;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.Pump;

/// <summary>
/// Pump throughput against a broker that takes time to answer: a no-op handler on the in-memory broker with 0 and
/// 1 ms per call (receive, renew, settle), one message per call (<c>MaxBatchSize = 1</c>, the loop before batching)
/// against batches (the default), on one thread and on two workers. Real clock: each cell drains a queue and reports
/// messages per second; the ratio compares batches to single calls in the same run. Prints one markdown table.
/// </summary>
/// <remarks>Usage: <c>pump-throughput [--smoke] [--messages N]</c>.</remarks>
internal static class PumpThroughputHarness
{
    public static int Run(string[] args)
    {
        var smoke = args.Contains("--smoke");
        var messages = (int)(HarnessOptions.Read(args, "--messages") ?? (smoke ? 500 : 20_000));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Pump throughput: no-op handler, in-memory broker, {messages} messages per batched cell (single-call cells at 1 ms: {SingleCallMessages(messages, 1)}), {Environment.ProcessorCount} cores, .NET {Environment.Version}{(smoke ? ", smoke run" : string.Empty)}."));
        Console.WriteLine();
        Console.WriteLine("| scheduler | broker latency | one call per message (msg/s) | batches (msg/s) | batches / single |");
        Console.WriteLine("|---|---:|---:|---:|---:|");
        foreach (var workers in new[] { 1, 2 })
        {
            foreach (var latencyMs in new[] { 0, 1 })
            {
                var single = Measure(workers, latencyMs, maxBatchSize: 1, SingleCallMessages(messages, latencyMs));
                var batched = Measure(workers, latencyMs, new MessagePumpOptions().MaxBatchSize, messages);
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {(workers == 1 ? "one thread (PriorityAsyncContextThread)" : "PriorityTaskScheduler, 2 workers")} | {latencyMs} ms | {single:0} | {batched:0} | {batched / single:0.0}× |"));
            }
        }

        return 0;
    }

    /// <summary>One call per message at 1 ms costs about 2 ms a message: fewer messages keep the cell short.</summary>
    private static int SingleCallMessages(int messages, int latencyMs) => latencyMs == 0 ? messages : Math.Max(100, messages / 20);

    private static double Measure(int workers, int latencyMs, int maxBatchSize, int messages)
    {
        var queue = new InMemoryTransport().CreateQueue("throughput", new InMemoryQueueOptions
        {
            LockDuration = TimeSpan.FromSeconds(30),
            Latency = TimeSpan.FromMilliseconds(latencyMs),
        });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[16]);
        }

        var options = new MessagePumpOptions { MaxBatchSize = maxBatchSize, EmptyReceiveDelay = TimeSpan.FromMilliseconds(10) };
        var elapsed = workers == 1
            ? MeasureOnContextThread(queue, options, messages)
            : MeasureOnWorkers(queue, options, messages, workers);
        var completed = queue.GetStatistics().Completed;
        if (completed != messages)
        {
            throw new InvalidOperationException($"Expected {messages} completed messages, got {completed}.");
        }

        return messages / elapsed.TotalSeconds;
    }

    private static TimeSpan MeasureOnContextThread(InMemoryQueue queue, MessagePumpOptions options, int messages)
    {
        using var context = new PriorityAsyncContextThread();
        return context.Context.GetLane(LanePriority.Processing).Run(() => DrainAsync(context.Context, queue, options, messages)).GetAwaiter().GetResult();
    }

    private static TimeSpan MeasureOnWorkers(InMemoryQueue queue, MessagePumpOptions options, int messages, int workers)
    {
        using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = workers });
        return DrainAsync(scheduler, queue, options, messages).GetAwaiter().GetResult();
    }

    private static async Task<TimeSpan> DrainAsync(PriorityScheduler scheduler, InMemoryQueue queue, MessagePumpOptions options, int messages)
    {
        var started = Stopwatch.GetTimestamp();
        await using var pump = new PriorityMessagePump(queue, (_, _) => Task.CompletedTask, scheduler, options);
        await pump.StartAsync();
        while (queue.GetStatistics().Completed < messages)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(5), scheduler.TimeProvider);
        }

        var elapsed = Stopwatch.GetElapsedTime(started);
        await pump.StopAsync();
        return elapsed;
    }
}
