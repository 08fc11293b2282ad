namespace PriorityAsync.DocsCompile;

/// <summary>
/// Proves the check catches what it is for, before it checks the real pages: a scratch repository whose README holds
/// one block of each kind, good and bad, and the failures each bad one must produce. A check that let one through would
/// pass the real pages whatever they hold, so the self-test failing fails the run.
/// </summary>
internal static class SelfTest
{
    private const string Page = """
        ```csharp
        Console.WriteLine("a whole program that compiles and runs");
        ```

        ```csharp
        Console.WriteLine(undefinedName);
        ```

        ```csharp
        int unused;
        ```

        ```csharp
        throw new InvalidOperationException("thrown");
        ```

        ```csharp
        return 3;
        ```

        <!-- program: runs when PRIORITYASYNC_DOCS_SELF_TEST_UNSET is set -->
        ```csharp
        throw new InvalidOperationException("compiled, never run");
        ```

        <!-- excerpt: tests/X/Sample.cs -->
        ```csharp
        var   answer =
            42;
        ```

        <!-- excerpt: tests/X/Sample.cs -->
        ```csharp
        var answer = 43;
        ```

        <!-- excerpt: tests/X/Missing.cs -->
        ```csharp
        var answer = 42;
        ```

        <!-- excerpt: tests/Y/Outside.cs -->
        ```csharp
        var answer = 42;
        ```

        <!-- excerpt tests/X/Sample.cs -->
        ```csharp
        var answer = 42;
        ```

        Inline code is not a fence: ```` ```csharp ````.

        ```csharp
        Thread.Sleep(Timeout.Infinite);
        ```
        """;

    /// <summary>The failures the page must produce, by the line of their block's fence and a piece of their text.</summary>
    private static readonly (int Line, string Text)[] Expected =
    [
        (5, "CS0103"),
        (9, "CS0168"),
        (13, "thrown"),
        (17, "exit code 3"),
        (33, "does not contain the excerpt"),
        (38, "not a file of the repository"),
        (43, "which PriorityAsync.sln does not build"),
        (48, "neither"),
        (54, "still running"),
        (54, "not checked"),
    ];

    /// <summary>Runs the self-test; returns what went wrong, or nothing.</summary>
    public static IReadOnlyList<string> Run()
    {
        var root = Directory.CreateTempSubdirectory("priorityasync-docs-self-test-").FullName;
        try
        {
            Directory.CreateDirectory(Path.Combine(root, "tests", "X"));
            Directory.CreateDirectory(Path.Combine(root, "tests", "Y"));
            File.WriteAllText(Path.Combine(root, "PriorityAsync.sln"), "Project(\"{0}\") = \"X\", \"tests\\X\\X.csproj\", \"{1}\"\n");
            File.WriteAllText(Path.Combine(root, "tests", "X", "X.csproj"), "<Project Sdk=\"Microsoft.NET.Sdk\" />\n");
            File.WriteAllText(Path.Combine(root, "tests", "X", "Sample.cs"), "class Sample { int M() { var answer = 42; return answer; } }\n");
            File.WriteAllText(Path.Combine(root, "tests", "Y", "Y.csproj"), "<Project Sdk=\"Microsoft.NET.Sdk\" />\n");
            File.WriteAllText(Path.Combine(root, "tests", "Y", "Outside.cs"), "class Outside { int M() { var answer = 42; return answer; } }\n");
            File.WriteAllText(Path.Combine(root, "README.md"), Page + "\n");

            var report = DocsCheck.Run(root, TimeSpan.FromSeconds(2), TextWriter.Null);

            var problems = new List<string>();
            foreach (var (line, text) in Expected)
            {
                if (!report.Failures.Any(f => f.StartsWith($"README.md:{line}:", StringComparison.Ordinal) && f.Contains(text, StringComparison.Ordinal)))
                {
                    problems.Add($"self-test: the block at README.md:{line} should fail with '{text}'");
                }
            }

            var unexpected = report.Failures.Where(f => !Expected.Any(e => f.StartsWith($"README.md:{e.Line}:", StringComparison.Ordinal))).ToList();
            problems.AddRange(unexpected.Select(f => $"self-test: unexpected failure {f}"));
            if (report.Blocks != 12 || report.Excerpts != 4 || report.Ran != 4)
            {
                problems.Add($"self-test: expected 12 blocks, 4 excerpts and 4 programs run, found {report.Blocks}, {report.Excerpts} and {report.Ran}");
            }

            return problems;
        }
        finally
        {
            Directory.Delete(root, recursive: true);
        }
    }
}
