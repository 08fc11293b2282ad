using PriorityAsync.DocsCompile;

// Compiles every C# block of README.md and docs/*.md and runs the whole programs (docs/index.md, "Code samples"):
//   dotnet run --project tests/DocsCompile -p:PriorityAsyncVersion=<packed version> [-- <repository root>]
// Exit code 0 when every block holds; the failures are listed otherwise.
var root = args.Length > 0 ? Path.GetFullPath(args[0]) : FindRoot(Directory.GetCurrentDirectory());
var pages = new[] { "README.md" }
    .Concat(Directory.GetFiles(Path.Combine(root, "docs"), "*.md").Select(p => Path.GetRelativePath(root, p).Replace('\\', '/')).Order(StringComparer.Ordinal))
    .ToList();
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

var compiler = new ProgramCompiler();

// The programs run with an empty folder as their current directory, as a new app would (a host reads appsettings.json
// from there and would otherwise watch the whole repository for changes).
var scratch = Directory.CreateTempSubdirectory("priorityasync-docs-");
Directory.SetCurrentDirectory(scratch.FullName);
var limit = TimeSpan.FromSeconds(120);
int programs = 0, ran = 0, excerpts = 0;
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
        Console.WriteLine($"{block.Location}: excerpt of {source}: {problem ?? "found"}");
        if (problem is not null)
        {
            failures.Add($"{block.Location}: {problem}");
        }

        continue;
    }

    programs++;
    var name = $"{Path.GetFileNameWithoutExtension(block.Page)}_{block.Line}";
    var (assembly, errors) = compiler.Compile(name, block.Code);
    if (assembly is null)
    {
        Console.WriteLine($"{block.Location}: program: does not compile");
        failures.AddRange(errors.Select(e => $"{block.Location}: {e} (line numbers count from the block's first line)"));
        continue;
    }

    if (Markers.RunsWith(block.Marker) is { } variable && string.IsNullOrEmpty(Environment.GetEnvironmentVariable(variable)))
    {
        Console.WriteLine($"{block.Location}: program: compiles; not run ({variable} is not set)");
        continue;
    }

    var (finished, failure, output) = ProgramRunner.Run(name, assembly, limit);
    ran++;
    Console.WriteLine($"{block.Location}: program: compiles, ran: {failure ?? "exit code 0"}");
    foreach (var line in output.Split('\n', StringSplitOptions.RemoveEmptyEntries))
    {
        Console.WriteLine($"    | {line.TrimEnd('\r')}");
    }

    if (failure is not null)
    {
        failures.Add($"{block.Location}: {failure}");
    }

    if (!finished)
    {
        break; // its thread cannot be stopped; report and end the process
    }
}

Console.WriteLine(
    $"{blocks.Count} C# blocks in {pages.Count} pages: {programs} whole programs ({ran} run), {excerpts} excerpts; {failures.Count} failures");
foreach (var failure in failures)
{
    Console.Error.WriteLine(failure);
}

Directory.SetCurrentDirectory(root);
scratch.Delete(recursive: true);
return failures.Count == 0 ? 0 : 1;

static string FindRoot(string folder)
{
    for (var current = folder; current is not null; current = Path.GetDirectoryName(current))
    {
        if (File.Exists(Path.Combine(current, "PriorityAsync.sln")))
        {
            return current;
        }
    }

    throw new InvalidOperationException($"No PriorityAsync.sln above {folder}: pass the repository root as the first argument.");
}
