using LeaseSimulation.Results;

namespace LeaseSimulation.Reporting;

/// <summary>Draws messages in flight (solid) and lost (dashed) over scenario time, one colour per strategy.</summary>
public static class TimelineChart
{
    private static readonly string[] Palette = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b"];

    /// <summary>Renders the timelines of <paramref name="results"/> (runs of one context and CPU time) as SVG.</summary>
    /// <param name="title">The chart title.</param>
    /// <param name="results">The runs; each becomes an in-flight line and a lost line.</param>
    /// <returns>The SVG document.</returns>
    public static string ToSvg(string title, IReadOnlyList<SimulationResult> results)
    {
        ArgumentNullException.ThrowIfNull(results);
        var chart = new SvgLineChart(title, "scenario time (s)", "messages");
        for (var i = 0; i < results.Count; i++)
        {
            var result = results[i];
            var color = Palette[i % Palette.Length];
            chart.AddSeries($"{result.Strategy} in flight", [.. result.Timeline.Select(s => (s.Seconds, (double)s.InFlight))], color);
            chart.AddSeries($"{result.Strategy} lost", [.. result.Timeline.Select(s => (s.Seconds, (double)s.Lost))], color, dashed: true);
        }

        return chart.ToSvg();
    }
}
