using LeaseSimulation.Results;

namespace LeaseSimulation.Reporting;

/// <summary>Writes the markdown report of a matrix run.</summary>
public static class SimulationReport
{
    /// <summary>Writes <c>simulation-report.md</c> into <paramref name="directory"/>.</summary>
    /// <param name="directory">The directory; created when missing.</param>
    /// <param name="results">The results.</param>
    /// <param name="arguments">The command-line arguments, for the record.</param>
    /// <returns>The report's path.</returns>
    public static string Write(string directory, IReadOnlyList<SimulationResult> results, string arguments)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(directory);
        ArgumentNullException.ThrowIfNull(results);
        Directory.CreateDirectory(directory);
        var path = Path.Combine(directory, "simulation-report.md");
        File.WriteAllText(path, "# Lost-lease simulation\n\n" + ResultTable.ToMarkdown(results));
        return path;
    }
}
