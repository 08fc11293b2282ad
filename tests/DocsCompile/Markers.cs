using System.Text.RegularExpressions;

namespace PriorityAsync.DocsCompile;

/// <summary>The marker lines a page may put right above a C# block (docs/index.md, "Code samples").</summary>
internal static partial class Markers
{
    /// <summary>Gets the compiled file an excerpt names, or <see langword="null"/> when the marker is not an excerpt's.</summary>
    public static string? ExcerptSource(string marker)
    {
        var match = ExcerptPattern().Match(marker);
        return match.Success ? match.Groups[1].Value : null;
    }

    /// <summary>Gets the environment variable a whole program needs to run, or <see langword="null"/> when it needs none.</summary>
    public static string? RunsWith(string marker)
    {
        var match = NeedsPattern().Match(marker);
        return match.Success ? match.Groups[1].Value : null;
    }

    /// <summary>Gets whether a marker line looks like one of ours but is misspelled, so that a typo fails instead of being ignored.</summary>
    public static bool IsMalformed(string marker)
        => marker.StartsWith("<!--", StringComparison.Ordinal)
            && (marker.Contains("excerpt", StringComparison.OrdinalIgnoreCase) || marker.Contains("program", StringComparison.OrdinalIgnoreCase))
            && ExcerptSource(marker) is null && RunsWith(marker) is null;

    [GeneratedRegex(@"^<!-- excerpt: (\S+\.cs) -->$", RegexOptions.CultureInvariant)]
    private static partial Regex ExcerptPattern();

    [GeneratedRegex(@"^<!-- program: runs when ([A-Z][A-Z0-9_]*) is set -->$", RegexOptions.CultureInvariant)]
    private static partial Regex NeedsPattern();
}
