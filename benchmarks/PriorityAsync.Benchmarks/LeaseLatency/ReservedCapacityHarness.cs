using System.Globalization;
using PriorityAsync.Benchmarks.LeaseLatency.Hosts;

namespace PriorityAsync.Benchmarks.LeaseLatency;

/// <summary>
/// The reserved-capacity cells of the lease-latency harness: long slices (10 ms, 100 ms, 1 s), spinning and blocking,
/// on a 2-worker <see cref="PriorityTaskScheduler"/> with and without its reserved lease worker, and on the thread pool.
/// Four processors keep both ordinary workers busy. Prints one markdown table.
/// </summary>
/// <remarks>Usage: <c>lease-latency-reserved [--smoke] [--seconds N] [--renew-ms N]</c>.</remarks>
internal static class ReservedCapacityHarness
{
    private const int Processors = 4;

    public static int Run(string[] args)
    {
        var smoke = args.Contains("--smoke");
        var seconds = HarnessOptions.Read(args, "--seconds") ?? (smoke ? 0.3 : 5.0);
        var renew = TimeSpan.FromMilliseconds(HarnessOptions.Read(args, "--renew-ms") ?? 20);
        var duration = TimeSpan.FromSeconds(seconds);
        TimeSpan[] slices = smoke
            ? [TimeSpan.FromMilliseconds(10)]
            : [TimeSpan.FromMilliseconds(10), TimeSpan.FromMilliseconds(100), TimeSpan.FromSeconds(1)];
        LeaseHostKind[] hosts = [LeaseHostKind.PriorityTaskScheduler, LeaseHostKind.PriorityTaskSchedulerLowPriorityWorkers, LeaseHostKind.PriorityTaskSchedulerUnreserved, LeaseHostKind.ThreadPool];

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Reserved-capacity harness: {Processors} processors, renew every {renew.TotalMilliseconds:0} ms, {seconds:0.0} s per cell, {Environment.ProcessorCount} cores, .NET {Environment.Version}{(smoke ? ", smoke run" : string.Empty)}."));
        Console.WriteLine();
        Console.WriteLine("| Scheduler | Slice | Processors | Renewals | p50 late (ms) | p99 late (ms) | max late (ms) | Slices/s | goal (reserved: p99 ≤ 2 ms; else ≤ slice + 1 ms) |");
        Console.WriteLine("|---|---|---|---|---|---|---|---|---|");
        var cells =
            from kind in Enum.GetValues<SliceKind>()
            from slice in slices
            from host in hosts
            select new LeaseLatencyCell(host, slice, Processors, kind);
        var missed = LeaseLatencyHarness.RunAndPrint(cells, duration, renew, LeaseHostFactory.IsReserved);

        Console.WriteLine();
        Console.WriteLine($"Reserved cells over 2 ms: {missed}. A '≥' marks a renewal still waiting when the cell ended (a lower bound).");
        return 0;
    }
}
