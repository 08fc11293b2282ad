using System.Text;
using LeaseSimulation.Results;

namespace LeaseSimulation.Reporting;

/// <summary>Writes the markdown report of a matrix run, with one timeline chart per context and CPU time.</summary>
public static class SimulationReport
{
    /// <summary>The report's file name.</summary>
    public const string FileName = "simulation-report.md";

    /// <summary>Writes <see cref="FileName"/> and its SVG charts into <paramref name="directory"/>.</summary>
    /// <param name="directory">The directory; created when missing.</param>
    /// <param name="results">The results.</param>
    /// <param name="arguments">The command-line arguments, for the record.</param>
    /// <returns>The report's path.</returns>
    public static string Write(string directory, IReadOnlyList<SimulationResult> results, string arguments)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(directory);
        ArgumentNullException.ThrowIfNull(results);
        ArgumentNullException.ThrowIfNull(arguments);
        Directory.CreateDirectory(directory);
        var report = new StringBuilder();
        report.Append("# Lost-lease simulation\n\n");
        report.Append($"Command: `dotnet run -c Release --project samples/LeaseSimulation --{(arguments.Length > 0 ? " " + arguments : string.Empty)}`\n\n");
        report.Append(ResultTable.ToMarkdown(results));
        report.Append("\nCharts: messages in flight (solid) and lost (dashed) over scenario time, sampled every 3 s.\n");
        foreach (var group in results.GroupBy(r => (r.Context, r.CpuMs, r.Messages)))
        {
            var name = $"timeline-{group.Key.Context}-{group.Key.CpuMs:0}ms-{group.Key.Messages}.svg";
            var title = $"{group.Key.Context}, CPU {group.Key.CpuMs:0} ms, {group.Key.Messages} messages";
            File.WriteAllText(Path.Combine(directory, name), TimelineChart.ToSvg(title, [.. group]));
            report.Append($"\n![{title}]({name})\n");
        }

        var path = Path.Combine(directory, FileName);
        File.WriteAllText(path, report.ToString());
        return path;
    }
}
