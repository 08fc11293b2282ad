using System.Globalization;
using System.Text;
using LeaseSimulation.Results;

namespace LeaseSimulation.Reporting;

/// <summary>
/// Formats a CPU sweep as one markdown table: a row per CPU time with its lower bound and the path that binds, then
/// total / lower bound and lost for each strategy.
/// </summary>
public static class SweepTable
{
    /// <summary>Formats <paramref name="results"/> (runs of one context at several CPU times).</summary>
    /// <param name="results">The runs.</param>
    /// <returns>The table, ending with a newline.</returns>
    public static string ToMarkdown(IReadOnlyList<SimulationResult> results)
    {
        ArgumentNullException.ThrowIfNull(results);
        var strategies = results.Select(r => r.Strategy).Distinct().ToList();
        var text = new StringBuilder();
        text.Append("| cpu ms | lower bound s | binds |");
        text.Append(string.Concat(strategies.Select(s => $" {s} total/bound | {s} lost |")));
        text.Append("\n|---:|---:|---|");
        text.Append(string.Concat(strategies.Select(_ => "---:|---:|")));
        text.Append('\n');
        foreach (var row in results.GroupBy(r => r.CpuMs).OrderBy(g => g.Key))
        {
            var first = row.First();
            text.Append(CultureInfo.InvariantCulture, $"| {row.Key:0} | {first.LowerBoundSeconds:0.0} | {first.LowerBoundBinding} |");
            foreach (var strategy in strategies)
            {
                var run = row.FirstOrDefault(r => r.Strategy == strategy);
                text.Append(run is null
                    ? " – | – |"
                    : string.Create(CultureInfo.InvariantCulture, $" {run.TotalOverLowerBound:0.000} | {run.Lost}{(run.StoppedAtDeadline ? "*" : string.Empty)} |"));
            }

            text.Append('\n');
        }

        return text.ToString();
    }
}
