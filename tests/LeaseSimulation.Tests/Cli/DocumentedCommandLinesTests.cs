using System.Text;
using System.Text.RegularExpressions;
using LeaseSimulation.Cli;

namespace LeaseSimulation.Tests.Cli;

/// <summary>Every simulation command line in the docs and the CI script still parses and plans.</summary>
public sealed partial class DocumentedCommandLinesTests
{
    private const string Marker = "--project samples/LeaseSimulation -- ";

    public static TheoryData<string, string> CommandLines()
    {
        var root = RepositoryRoot.Find();
        var files = new[] { "README.md", Path.Combine(".ci", "run") }
            .Concat(Directory.GetFiles(Path.Combine(root, "docs"), "*.md").Select(f => Path.GetRelativePath(root, f)));
        var data = new TheoryData<string, string>();
        var seen = new HashSet<(string File, string Arguments)>();
        foreach (var file in files)
        {
            var text = File.ReadAllText(Path.Combine(root, file)).Replace("\\\n", " ", StringComparison.Ordinal);
            foreach (var line in text.Split('\n').Where(l => l.Contains(Marker, StringComparison.Ordinal)))
            {
                var arguments = line[(line.IndexOf(Marker, StringComparison.Ordinal) + Marker.Length)..];
                var commandLine = Comment().Replace(arguments, string.Empty).Trim();

                // A page that shows the same command twice gives one case: xunit reports a repeated case as skipped.
                if (seen.Add((file, commandLine)))
                {
                    data.Add(file, commandLine);
                }
            }
        }

        return data;
    }

    [Fact]
    public void TheDocsHaveCommandLines()
    {
        CommandLines().Count.Should().BeGreaterThan(10);
    }

    [Theory]
    [MemberData(nameof(CommandLines))]
    public void DocumentedCommandLine_ParsesAndPlans(string file, string commandLine)
    {
        var args = Split(commandLine.Replace("$PRIORITYASYNC_POSTGRES", "Host=127.0.0.1;Username=sim", StringComparison.Ordinal));

        var options = SimulationCommand.Parse(args);
        if (args.Contains("--help"))
        {
            return;
        }

        if (DefaultRunPlanner.AppliesTo(options))
        {
            DefaultRunPlanner.Plan(options).Demonstration.Should().NotBeEmpty($"{file}: {commandLine}");
        }
        else
        {
            (options.Sweep ? SweepPlanner.Plan(options) : MatrixPlanner.Plan(options)).Should().NotBeEmpty($"{file}: {commandLine}");
        }
    }

    /// <summary>Splits like a shell: whitespace separates, double quotes group.</summary>
    private static string[] Split(string commandLine)
    {
        var args = new List<string>();
        var current = new StringBuilder();
        var quoted = false;
        foreach (var c in commandLine)
        {
            if (c == '"')
            {
                quoted = !quoted;
            }
            else if (char.IsWhiteSpace(c) && !quoted)
            {
                if (current.Length > 0)
                {
                    args.Add(current.ToString());
                    current.Clear();
                }
            }
            else
            {
                current.Append(c);
            }
        }

        if (current.Length > 0)
        {
            args.Add(current.ToString());
        }

        return [.. args];
    }

    [GeneratedRegex(@"\s#.*$|`.*$")]
    private static partial Regex Comment();
}
