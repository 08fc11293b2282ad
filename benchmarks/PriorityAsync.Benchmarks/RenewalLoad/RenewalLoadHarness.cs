using System.Globalization;
using PriorityAsync.Benchmarks.LeaseLatency;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.RenewalLoad;

/// <summary>
/// Renewal load (issue 23): renew calls per second a pump sends to its broker with 1 000 and 10 000 messages in
/// flight, 30 s locks and slow handlers (60–180 s each, seeded), on the in-memory broker (1 ms per call) on one thread
/// and virtual time. Every renew call is counted where it reaches the broker (<see cref="CountingSource"/>): a single
/// renewal is one call, a batch renewal one call. Each cell runs 120 s of virtual time to spread the locks, then
/// counts for 120 s (six renewal periods). Prints one markdown table.
/// </summary>
/// <remarks>Usage: <c>renewal-load [--smoke] [--seed N]</c>.</remarks>
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
        Console.WriteLine("| in flight | keeper | renew calls/s | leases renewed/s | leases per call | leases lost |");
        Console.WriteLine("|---:|---|---:|---:|---:|---:|");
        foreach (var size in sizes)
        {
            var cell = Measure(size, seed);
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {size} | one call per lease | {cell.CallsPerSecond:0.0} | {cell.LeasesPerSecond:0.0} | {cell.LeasesPerCall:0.0} | {cell.LeasesLost} |"));
        }

        return 0;
    }

    private static RenewalLoadCell Measure(int inFlight, int seed)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryLeaseBroker(clock).CreateQueue("renewal-load", new InMemoryQueueOptions
        {
            LockDuration = LockDuration,
            Latency = TimeSpan.FromMilliseconds(1),
        });
        for (var i = 0; i < inFlight * 4; i++)
        {
            queue.Send(new byte[16]);
        }

        var counter = new RenewCallCounter();
        var source = new CountingSource(queue, counter);
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
