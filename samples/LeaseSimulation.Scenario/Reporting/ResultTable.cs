using System.Globalization;
using System.Text;
using LeaseSimulation.Results;

namespace LeaseSimulation.Reporting;

/// <summary>Formats results as one markdown table (readable as plain text too).</summary>
public static class ResultTable
{
    private static readonly string[] Headers =
    [
        "context", "strategy", "clock", "broker latency ms", "cpu ms", "messages", "completed", "lost", "total s", "mean s/msg",
        "worst lease lateness ms", "1-thread CPU limit s", "total/limit", "lower bound s", "total/bound",
    ];

    /// <summary>Formats <paramref name="results"/> as a markdown table with aligned columns.</summary>
    /// <param name="results">The results, in row order.</param>
    /// <returns>The table, one line per row, ending with a newline.</returns>
    public static string ToMarkdown(IEnumerable<SimulationResult> results)
    {
        ArgumentNullException.ThrowIfNull(results);
        var list = results.ToList();
        var text = new StringBuilder(MarkdownTable.Format(Headers, [.. list.Select(ToCells)], textColumns: 3));

        if (list.Any(r => r.StoppedAtDeadline))
        {
            text.Append("\n\\* stopped at the deadline (SimulationSettings.DefaultDeadline, scenario time): messages in flight then count as lost, messages never received are in neither column.\n");
        }

        return text.ToString();
    }

    private static string[] ToCells(SimulationResult r) =>
    [
        r.Context,
        r.Strategy,
        r.Clock,
        Format(r.BrokerLatencyMs, "0"),
        Format(r.CpuMs, "0"),
        r.Messages.ToString(CultureInfo.InvariantCulture),
        r.Completed.ToString(CultureInfo.InvariantCulture),
        r.StoppedAtDeadline ? $"{r.Lost}*" : r.Lost.ToString(CultureInfo.InvariantCulture),
        Format(r.TotalSeconds, "0.0"),
        Format(r.MeanMessageSeconds, "0.0"),
        Format(r.MaxLeaseLatenessMs, "0"),
        Format(r.CpuLimitSeconds, "0"),
        Format(r.TotalOverLimit, "0.000"),
        Format(r.LowerBoundSeconds, "0.0"),
        Format(r.TotalOverLowerBound, "0.000"),
    ];

    private static string Format(double value, string format) => value.ToString(format, CultureInfo.InvariantCulture);
}
