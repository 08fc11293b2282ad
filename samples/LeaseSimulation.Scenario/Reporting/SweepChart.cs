using System.Globalization;
using LeaseSimulation.Results;
using ScottPlot;
using ScottPlot.TickGenerators;

namespace LeaseSimulation.Reporting;

/// <summary>
/// Draws a CPU sweep: total / lower bound (or lost) per strategy over the CPU times on a log scale, one colour per
/// strategy. The x axis is log10(CPU ms / smallest CPU ms), so the smallest CPU time sits at the origin.
/// </summary>
public static class SweepChart
{
    /// <summary>
    /// The top of the total / lower bound axis: higher points are drawn at the top and their values listed in the
    /// legend, e.g. <c>pump (&gt;3: 16.8, 5.3)</c>.
    /// </summary>
    public const double TotalOverBoundAxisMax = 3;

    /// <summary>Renders total / lower bound (or lost, with <paramref name="lost"/>) of every strategy as SVG.</summary>
    /// <param name="title">The chart title.</param>
    /// <param name="results">The runs of the sweep.</param>
    /// <param name="lost">Whether to draw lost messages instead of total / lower bound.</param>
    /// <returns>The SVG document.</returns>
    public static string ToSvg(string title, IReadOnlyList<SimulationResult> results, bool lost = false)
    {
        ArgumentNullException.ThrowIfNull(results);
        var cpuTimes = results.Select(r => r.CpuMs).Distinct().Order().ToList();
        var plot = LineChart.Create(title, "CPU ms per operation, log scale (each followed by ~1000 ms IO)", lost ? "messages lost" : "total / lower bound");
        var origin = cpuTimes.Count > 0 ? Math.Max(cpuTimes[0], 1) : 1;
        double X(double cpu) => Math.Log10(Math.Max(cpu, 1) / origin);
        plot.Axes.Bottom.TickGenerator = new NumericManual(
            [.. cpuTimes.Select(X)],
            [.. cpuTimes.Select(cpu => cpu.ToString("0", CultureInfo.InvariantCulture))]);
        var strategies = results.Select(r => r.Strategy).Distinct().ToList();
        for (var s = 0; s < strategies.Count; s++)
        {
            var points = results
                .Where(r => r.Strategy == strategies[s])
                .OrderBy(r => r.CpuMs)
                .Select(r => (X(r.CpuMs), lost ? r.Lost : Math.Min(r.TotalOverLowerBound, TotalOverBoundAxisMax)))
                .ToList();
            var offScale = lost ? [] : results
                .Where(r => r.Strategy == strategies[s] && r.TotalOverLowerBound > TotalOverBoundAxisMax)
                .OrderBy(r => r.CpuMs)
                .Select(r => r.TotalOverLowerBound.ToString("0.0", CultureInfo.InvariantCulture))
                .ToList();
            var name = offScale.Count == 0 ? strategies[s] : $"{strategies[s]} (>{TotalOverBoundAxisMax:0}: {string.Join(", ", offScale)})";
            LineChart.AddLine(plot, name, points, LineChart.ColorOf(s));
        }

        if (!lost)
        {
            plot.Axes.SetLimitsY(0, TotalOverBoundAxisMax * 1.05);
        }

        if (!lost && cpuTimes.Count > 0)
        {
            LineChart.AddLine(plot, "lower bound (1.0)", [(X(cpuTimes[0]), 1), (X(cpuTimes[^1]), 1)], Color.FromHex("#444444"), dashed: true);
        }

        return LineChart.ToSvg(plot);
    }
}
