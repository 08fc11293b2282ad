using System.Globalization;
using PriorityAsync.Benchmarks.LeaseLatency;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.Allocations;

/// <summary>
/// What a message costs the pump in allocations: a no-op handler on the in-memory broker (no latency) on one thread,
/// bytes allocated per message (<see cref="GC.GetTotalAllocatedBytes(bool)"/> over the whole drain, the broker's own
/// message included) and a sampling profile by type (<see cref="AllocationTickListener"/>). Prints markdown.
/// </summary>
/// <remarks>Usage: <c>pump-allocations [--messages N] [--top N]</c>.</remarks>
internal static class PumpAllocationsHarness
{
    public static int Run(string[] args)
    {
        var messages = (int)(HarnessOptions.Read(args, "--messages") ?? 200_000);
        var top = (int)(HarnessOptions.Read(args, "--top") ?? 25);
        using var listener = new AllocationTickListener();
        Drain(Math.Min(messages, 20_000), listener, record: false); // warm up (JIT, tiering)
        var (bytes, elapsed) = Drain(messages, listener, record: true);
        var total = listener.Samples.Values.Sum();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Pump allocations: no-op handler, in-memory broker, one thread, {messages} messages: {bytes / (double)messages:0} B per message, {messages / elapsed.TotalSeconds:0} msg/s (this run, not a benchmark); {total} allocation samples (one per ~100 KB)."));
        Console.WriteLine();
        Console.WriteLine("| type | samples | share | ≈ B per message |");
        Console.WriteLine("|---|---:|---:|---:|");
        foreach (var (type, samples) in listener.Samples.OrderByDescending(p => p.Value).Take(top))
        {
            var share = samples / (double)total;
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| `{type}` | {samples} | {share:P1} | {share * bytes / messages:0} |"));
        }

        return 0;
    }

    private static (long Bytes, TimeSpan Elapsed) Drain(int messages, AllocationTickListener listener, bool record)
    {
        var queue = new InMemoryTransport().CreateQueue("allocations");
        var body = new byte[16];
        for (var i = 0; i < messages; i++)
        {
            queue.Send(body);
        }

        using var context = new PriorityAsyncContextThread();
        GC.Collect();
        var before = GC.GetTotalAllocatedBytes(precise: true);
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        listener.Recording = record;
        context.Context.GetLane(LanePriority.Processing).Run(() => DrainAsync(context.Context, queue, messages)).GetAwaiter().GetResult();
        listener.Recording = false;
        var elapsed = System.Diagnostics.Stopwatch.GetElapsedTime(started);
        return (GC.GetTotalAllocatedBytes(precise: true) - before, elapsed);
    }

    private static async Task DrainAsync(PriorityScheduler scheduler, InMemoryQueue queue, int messages)
    {
        var handled = 0;
        var allHandled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var pump = new PriorityMessagePump(
            queue,
            (_, _) =>
            {
                if (++handled == messages)
                {
                    allHandled.TrySetResult();
                }

                return Task.CompletedTask;
            },
            scheduler);
        await pump.StartAsync();
        await allHandled.Task;
        await pump.StopAsync();
    }
}
