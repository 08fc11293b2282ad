using System.Globalization;
using PriorityAsync.Benchmarks.LeaseLatency.Hosts;

namespace PriorityAsync.Benchmarks.LeaseLatency;

/// <summary>
/// The lease-latency harness (real time, not BenchmarkDotNet): how late a lease renewal runs while CPU-heavy
/// processors saturate the scheduler. Prints one markdown table.
/// </summary>
/// <remarks>
/// Usage: <c>lease-latency [--smoke] [--seconds N] [--renew-ms N]</c>. <c>--smoke</c> runs a few short cells so the
/// harness cannot rot; it asserts nothing about speed.
/// </remarks>
internal static class LeaseLatencyHarness
{
    public static int Run(string[] args)
    {
        var smoke = args.Contains("--smoke");
        var seconds = HarnessOptions.Read(args, "--seconds") ?? (smoke ? 0.3 : 3.0);
        var renew = TimeSpan.FromMilliseconds(HarnessOptions.Read(args, "--renew-ms") ?? 5);
        var duration = TimeSpan.FromSeconds(seconds);
        TimeSpan[] slices = smoke ? [TimeSpan.FromMilliseconds(1)] : [TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(10)];
        int[] processorCounts = smoke ? [1, 10] : [1, 10, 100];

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Lease-latency harness: renew every {renew.TotalMilliseconds:0} ms, {seconds:0.0} s per cell, {Environment.ProcessorCount} cores, .NET {Environment.Version}{(smoke ? ", smoke run" : string.Empty)}."));
        Console.WriteLine();
        Console.WriteLine("| Scheduler | Slice | Processors | Renewals | p50 late (ms) | p99 late (ms) | max late (ms) | Slices/s | p99 ≤ slice + 1 ms |");
        Console.WriteLine("|---|---|---|---|---|---|---|---|---|");
        var cells =
            from host in Enum.GetValues<LeaseHostKind>()
            from slice in slices
            from processors in processorCounts
            select new LeaseLatencyCell(host, slice, processors);
        var missed = RunAndPrint(cells, duration, renew, LeaseHostFactory.IsPriorityAsync);

        Console.WriteLine();
        Console.WriteLine($"PriorityAsync cells over the goal: {missed}. A '≥' marks a renewal still waiting when the cell ended (a lower bound).");
        return 0;
    }

    /// <summary>Runs each cell, prints its row, and counts the cells <paramref name="judged"/> that missed their goal.</summary>
    public static int RunAndPrint(IEnumerable<LeaseLatencyCell> cells, TimeSpan duration, TimeSpan renew, Func<LeaseHostKind, bool> judged)
    {
        var missed = 0;
        foreach (var cell in cells)
        {
            var result = cell.Run(duration, renew);
            Console.WriteLine(result.ToMarkdownRow());
            missed += judged(cell.Host) && !result.MeetsGoal ? 1 : 0;
        }

        return missed;
    }
}
