namespace PriorityAsync.DocsCompile;

/// <summary>What one check of a repository's pages found.</summary>
internal sealed record DocsReport(int Pages, int Blocks, int Programs, int Ran, int Excerpts, IReadOnlyList<string> Failures);

/// <summary>
/// Checks every C# block of README.md and docs/*.md under a repository root: excerpts against their files, whole
/// programs compiled and, unless they need an environment variable that is not set, run (docs/index.md, "Code samples").
/// </summary>
internal static class DocsCheck
{
    private static readonly ProgramCompiler Compiler = new();

    /// <summary>Checks the pages under <paramref name="root"/>, writing one line per block to <paramref name="log"/>.</summary>
    /// <param name="root">The repository root (the folder of PriorityAsync.sln).</param>
    /// <param name="limit">How long a program may run before it counts as a hang.</param>
    /// <param name="log">Where the lines go.</param>
    public static DocsReport Run(string root, TimeSpan limit, TextWriter log)
    {
        var pages = new List<string> { "README.md" };
        var docs = Path.Combine(root, "docs");
        if (Directory.Exists(docs))
        {
            pages.AddRange(Directory.GetFiles(docs, "*.md").Select(p => Path.GetRelativePath(root, p).Replace('\\', '/')).Order(StringComparer.Ordinal));
        }

        var failures = new List<string>();
        var blocks = new List<CodeBlock>();
        foreach (var page in pages)
        {
            try
            {
                blocks.AddRange(CodeBlock.Read(root, page));
            }
            catch (InvalidDataException exception)
            {
                failures.Add(exception.Message);
            }
        }

        // The programs run with an empty folder as their current directory, as a new app would (a host reads
        // appsettings.json from there and would otherwise watch the whole repository for changes).
        var previousDirectory = Directory.GetCurrentDirectory();
        var scratch = Directory.CreateTempSubdirectory("priorityasync-docs-");
        Directory.SetCurrentDirectory(scratch.FullName);
        int programs = 0, ran = 0, excerpts = 0;
        try
        {
            foreach (var block in blocks)
            {
                if (Markers.IsMalformed(block.Marker))
                {
                    failures.Add($"{block.Location}: the marker '{block.Marker}' is neither '<!-- excerpt: path/File.cs -->' nor '<!-- program: runs when VARIABLE is set -->'");
                    continue;
                }

                if (Markers.ExcerptSource(block.Marker) is { } source)
                {
                    excerpts++;
                    var problem = ExcerptCheck.Verify(root, block, source);
                    log.WriteLine($"{block.Location}: excerpt of {source}: {problem ?? "found"}");
                    if (problem is not null)
                    {
                        failures.Add($"{block.Location}: {problem}");
                    }

                    continue;
                }

                programs++;
                var name = $"{Path.GetFileNameWithoutExtension(block.Page)}_{block.Line}";
                var (assembly, errors) = Compiler.Compile(name, block.Code);
                if (assembly is null)
                {
                    log.WriteLine($"{block.Location}: program: does not compile");
                    failures.AddRange(errors.Select(e => $"{block.Location}: {e} (line numbers count from the block's first line)"));
                    continue;
                }

                if (Markers.RunsWith(block.Marker) is { } variable && string.IsNullOrEmpty(Environment.GetEnvironmentVariable(variable)))
                {
                    log.WriteLine($"{block.Location}: program: compiles; not run ({variable} is not set)");
                    continue;
                }

                var (finished, failure, output) = ProgramRunner.Run(name, assembly, limit);
                ran++;
                log.WriteLine($"{block.Location}: program: compiles, ran: {failure ?? "exit code 0"}");
                foreach (var line in output.Split('\n', StringSplitOptions.RemoveEmptyEntries))
                {
                    log.WriteLine($"    | {line.TrimEnd('\r')}");
                }

                if (failure is not null)
                {
                    failures.Add($"{block.Location}: {failure}");
                }

                if (!finished)
                {
                    failures.Add($"{block.Location}: the blocks after this hang were not checked");
                    break; // its thread cannot be stopped; nothing after it can be trusted to run alone
                }
            }
        }
        finally
        {
            Directory.SetCurrentDirectory(previousDirectory);
            scratch.Delete(recursive: true);
        }

        return new DocsReport(pages.Count, blocks.Count, programs, ran, excerpts, failures);
    }
}
