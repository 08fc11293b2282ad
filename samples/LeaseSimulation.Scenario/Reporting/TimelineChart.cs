using LeaseSimulation.Results;

namespace LeaseSimulation.Reporting;

/// <summary>Draws messages in flight (solid) and lost (dashed) over scenario time, one colour per strategy.</summary>
public static class TimelineChart
{
    /// <summary>Renders the timelines of <paramref name="results"/> (runs of one context and CPU time) as SVG.</summary>
    /// <param name="title">The chart title.</param>
    /// <param name="results">The runs; each becomes an in-flight line and a lost line.</param>
    /// <returns>The SVG document.</returns>
    public static string ToSvg(string title, IReadOnlyList<SimulationResult> results)
    {
        ArgumentNullException.ThrowIfNull(results);
        var plot = LineChart.Create(title, "scenario time (s)", "messages");
        for (var i = 0; i < results.Count; i++)
        {
            var result = results[i];
            var color = LineChart.ColorOf(i);
            LineChart.AddLine(plot, $"{result.Strategy} in flight", [.. result.Timeline.Select(s => (s.Seconds, (double)s.InFlight))], color);
            LineChart.AddLine(plot, $"{result.Strategy} lost", [.. result.Timeline.Select(s => (s.Seconds, (double)s.Lost))], color, dashed: true);
        }

        plot.Axes.SetLimitsY(0, Math.Max(1, results.SelectMany(r => r.Timeline).Select(s => (double)s.InFlight).DefaultIfEmpty(0).Max()) * 1.05);
        return LineChart.ToSvg(plot);
    }
}
