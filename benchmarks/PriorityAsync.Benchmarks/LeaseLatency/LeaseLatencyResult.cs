using System.Globalization;
using PriorityAsync.Benchmarks.LeaseLatency.Hosts;

namespace PriorityAsync.Benchmarks.LeaseLatency;

/// <summary>The figures of one cell: lateness percentiles of the lease renewals and the processors' throughput.</summary>
internal sealed record LeaseLatencyResult(LeaseLatencyCell Cell, double[] SortedLatenessMs, bool Censored, double SlicesPerSecond)
{
    public double P50 => Percentile(0.50);

    public double P99 => Percentile(0.99);

    public double Max => SortedLatenessMs.Length == 0 ? double.NaN : SortedLatenessMs[^1];

    /// <summary>Gets whether the cell meets the PriorityAsync goal (p99 ≤ slice + 1 ms); a censored sample counts with its lower bound.</summary>
    public bool MeetsGoal => P99 <= Cell.Goal.TotalMilliseconds;

    public string ToMarkdownRow()
    {
        var prefix = Censored ? "≥ " : string.Empty;
        var goal = LeaseHostFactory.IsPriorityAsync(Cell.Host) ? (MeetsGoal ? "met" : "**missed**") : (MeetsGoal ? "within" : "over");
        return string.Create(
            CultureInfo.InvariantCulture,
            $"| {LeaseHostFactory.Describe(Cell.Host)} | {Cell.Slice.TotalMilliseconds:0} ms {Cell.Kind.ToString().ToLowerInvariant()} | {Cell.Processors} | {SortedLatenessMs.Length} | {P50:0.0} | {P99:0.0} | {prefix}{Max:0.0} | {SlicesPerSecond:0} | {goal} |");
    }

    /// <summary>Nearest-rank percentile.</summary>
    private double Percentile(double fraction)
    {
        if (SortedLatenessMs.Length == 0)
        {
            return double.NaN;
        }

        var rank = (int)Math.Ceiling(fraction * SortedLatenessMs.Length);
        return SortedLatenessMs[Math.Clamp(rank - 1, 0, SortedLatenessMs.Length - 1)];
    }
}
