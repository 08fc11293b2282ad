using System.Globalization;
using PriorityAsync.Benchmarks.LeaseLatency;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.RenewalLoad;

/// <summary>
/// Renewal load: renew calls per second a pump sends to its broker with 1 000 and 10 000 messages in
/// flight, 30 s locks and slow handlers (60–180 s each, seeded), on the in-memory broker (1 ms per call) on one thread
/// and virtual time. Every renew call is counted where it reaches the broker (<see cref="CountingSource"/>): a single
/// renewal is one call, a batch renewal one call. "Before" and "after" run in the same run on the same seed: the broker
/// seen with single renewals only (the interface's default batch renewal, one call per lease at the per-message rule's
/// due time: what the per-message keepers sent) and with its native batch renewal. Each cell runs 120 s of virtual
/// time to spread the locks, then counts for 120 s (six renewal periods). Prints one markdown table.
/// </summary>
/// <remarks>Usage: <c>renewal-load [--smoke] [--seed N]</c>; with <c>PRIORITYASYNC_POSTGRES</c> set, the same cells on PostgreSQL too (<see cref="PostgreSqlRenewalLoad"/>).</remarks>
internal static class RenewalLoadHarness
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan WarmUp = TimeSpan.FromSeconds(120);
    private static readonly TimeSpan Window = TimeSpan.FromSeconds(120);

    public static int Run(string[] args)
    {
        var smoke = args.Contains("--smoke");
        var seed = (int)(HarnessOptions.Read(args, "--seed") ?? 23);
        int[] sizes = smoke ? [100] : [1_000, 10_000];
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Renewal load: in-memory broker (1 ms per call), one thread, virtual time, {LockDuration.TotalSeconds:0} s locks, handlers of 60-180 s, counted over {Window.TotalSeconds:0} s after {WarmUp.TotalSeconds:0} s; seed {seed} (replay with --seed {seed}){(smoke ? ", smoke run" : string.Empty)}."));
        Console.WriteLine();
        Console.WriteLine("| in flight | renewal | renew calls/s | leases renewed/s | leases per call | leases lost | calls / batched calls |");
        Console.WriteLine("|---:|---|---:|---:|---:|---:|---:|");
        foreach (var size in sizes)
        {
            var single = Measure(size, seed, native: false);
            var batched = Measure(size, seed, native: true);
            Print(size, "one call per lease (default RenewBatchAsync)", single, single.CallsPerSecond / batched.CallsPerSecond);
            Print(size, "batches (native RenewBatchAsync)", batched, 1);
        }

        if (Environment.GetEnvironmentVariable("PRIORITYASYNC_POSTGRES") is { Length: > 0 } postgres && !smoke)
        {
            Console.WriteLine();
            Console.WriteLine("PostgreSQL (PRIORITYASYNC_POSTGRES), real clock, one thread, 30 s locks, handlers outlasting the run, counted over 40 s from 25 s after the last receive:");
            Console.WriteLine();
            Console.WriteLine("| in flight | renewal | renew calls/s | leases renewed/s | leases per call | leases lost | calls / batched calls |");
            Console.WriteLine("|---:|---|---:|---:|---:|---:|---:|");
            foreach (var size in sizes)
            {
                var single = PostgreSqlRenewalLoad.Measure(postgres, size, native: false);
                var batched = PostgreSqlRenewalLoad.Measure(postgres, size, native: true);
                Print(size, "one call per lease (default RenewBatchAsync)", single, single.CallsPerSecond / batched.CallsPerSecond);
                Print(size, "batches (native RenewBatchAsync: one statement)", batched, 1);
            }
        }

        return 0;
    }

    private static void Print(int size, string renewal, RenewalLoadCell cell, double ratio) =>
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {size} | {renewal} | {cell.CallsPerSecond:0.0} | {cell.LeasesPerSecond:0.0} | {cell.LeasesPerCall:0.0} | {cell.LeasesLost} | {ratio:0.0}× |"));

    private static RenewalLoadCell Measure(int inFlight, int seed, bool native)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("renewal-load", new InMemoryQueueOptions
        {
            LockDuration = LockDuration,
            Latency = TimeSpan.FromMilliseconds(1),
        });
        for (var i = 0; i < inFlight * 4; i++)
        {
            queue.Send(new byte[16]);
        }

        var counter = new RenewCallCounter();
        var source = new CountingSource(queue, counter, native);
        var random = new Random(seed);
        RenewalLoadCell? cell = null;
        PriorityAsyncContext.Run(
            async () =>
            {
                var pump = new PriorityMessagePump(
                    source,
                    async (context, token) =>
                    {
                        // A slow handler: awaited work of 60-180 s (I/O, a downstream call), far longer than the lock.
                        await Task.Delay(TimeSpan.FromSeconds(60 + random.Next(121)), context.TimeProvider, token);
                    },
                    PriorityScheduler.Current!,
                    new MessagePumpOptions { MaxInFlight = inFlight, ShutdownTimeout = TimeSpan.Zero });
                await pump.StartAsync();
                await Task.Delay(WarmUp, clock);
                var calls = counter.Calls;
                var leases = counter.Leases;
                await Task.Delay(Window, clock);
                var seconds = Window.TotalSeconds;
                var stats = pump.GetStatistics();
                cell = new RenewalLoadCell(
                    (counter.Calls - calls) / seconds,
                    (counter.Leases - leases) / seconds,
                    stats.LeasesLost);
                if (stats.InFlight != inFlight)
                {
                    throw new InvalidOperationException($"Expected {inFlight} messages in flight, found {stats.InFlight}.");
                }

                await pump.StopAsync();
            },
            new PrioritySchedulerOptions { TimeProvider = clock });
        return cell!;
    }
}
