using System.Text;
using LeaseSimulation.Results;

namespace LeaseSimulation.Reporting;

/// <summary>Writes the markdown report of a CPU sweep (<c>--sweep --report DIR</c>) with its two charts.</summary>
public static class SweepReport
{
    /// <summary>The report's file name.</summary>
    public const string FileName = "sweep-report.md";

    /// <summary>The chart of total / lower bound.</summary>
    public const string TotalChartName = "sweep-total-over-bound.svg";

    /// <summary>The chart of lost messages.</summary>
    public const string LostChartName = "sweep-lost.svg";

    /// <summary>Writes <see cref="FileName"/>, <see cref="TotalChartName"/> and <see cref="LostChartName"/> into <paramref name="directory"/>.</summary>
    /// <param name="directory">The directory; created when missing.</param>
    /// <param name="results">The runs of the sweep.</param>
    /// <param name="arguments">The command-line arguments, for the record.</param>
    /// <returns>The report's path.</returns>
    public static string Write(string directory, IReadOnlyList<SimulationResult> results, string arguments)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(directory);
        ArgumentNullException.ThrowIfNull(results);
        ArgumentNullException.ThrowIfNull(arguments);
        Directory.CreateDirectory(directory);
        var messages = results.Count > 0 ? results[0].Messages : 0;
        File.WriteAllText(Path.Combine(directory, TotalChartName), SweepChart.ToSvg($"CPU sweep, one thread, virtual time, {messages} messages: total / lower bound", results));
        File.WriteAllText(Path.Combine(directory, LostChartName), SweepChart.ToSvg($"CPU sweep, one thread, virtual time, {messages} messages: messages lost", results, lost: true));
        var report = new StringBuilder();
        report.Append("# Lost-lease simulation: CPU sweep\n\n");
        report.Append($"Command: `dotnet run -c Release --project samples/LeaseSimulation --{(arguments.Length > 0 ? " " + arguments : string.Empty)}`\n\n");
        report.Append(SweepTable.ToMarkdown(results));
        report.Append($"\n![total / lower bound]({TotalChartName})\n\n![messages lost]({LostChartName})\n\n");
        report.Append(ResultTable.ToMarkdown(results));
        var path = Path.Combine(directory, FileName);
        File.WriteAllText(path, report.ToString());
        return path;
    }
}
