using System.Text.RegularExpressions;

namespace PriorityAsync.DocsCompile;

/// <summary>
/// Checks an excerpt: the file it names exists, is compiled by a project of PriorityAsync.sln (the nearest folder above
/// it with a .csproj, a project that does not turn off the SDK's default compile items and does not remove the file),
/// and contains the block's code, compared with every run of white space (line breaks included) as one space.
/// </summary>
internal static partial class ExcerptCheck
{
    /// <summary>Returns why the excerpt fails, or <see langword="null"/> when it holds.</summary>
    public static string? Verify(string root, CodeBlock block, string source)
    {
        var path = Path.GetFullPath(Path.Combine(root, source));
        if (!path.StartsWith(Path.GetFullPath(root) + Path.DirectorySeparatorChar, StringComparison.Ordinal) || !File.Exists(path)
            || source.Split('/').Any(segment => segment is "bin" or "obj"))
        {
            return $"the excerpt names {source}, which is not a file of the repository";
        }

        var project = FindProject(root, path);
        if (project is null)
        {
            return $"{source} is in no project folder";
        }

        var projectPath = Path.GetRelativePath(root, project).Replace('\\', '/');
        var solution = File.ReadAllText(Path.Combine(root, "PriorityAsync.sln")).Replace('\\', '/');
        if (!solution.Contains(projectPath, StringComparison.Ordinal))
        {
            return $"{source} belongs to {projectPath}, which PriorityAsync.sln does not build";
        }

        var projectText = File.ReadAllText(project);
        var fileName = Path.GetFileName(path);
        if (projectText.Contains("<EnableDefaultCompileItems>false", StringComparison.OrdinalIgnoreCase)
            || Regex.IsMatch(projectText, $"<Compile\\s+Remove=\"[^\"]*{Regex.Escape(fileName)}\"", RegexOptions.CultureInvariant))
        {
            return $"{projectPath} does not compile {source}";
        }

        var code = Normalize(block.Code);
        if (code.Length == 0)
        {
            return "the excerpt is empty";
        }

        return Normalize(File.ReadAllText(path)).Contains(code, StringComparison.Ordinal)
            ? null
            : $"{source} does not contain the excerpt (compared with each run of white space as one space): copy it from the file again";
    }

    /// <summary>Every run of white space becomes one space; leading and trailing white space goes.</summary>
    public static string Normalize(string text) => WhiteSpace().Replace(text, " ").Trim();

    private static string? FindProject(string root, string file)
    {
        var rootPath = Path.GetFullPath(root);
        for (var folder = Path.GetDirectoryName(file); folder is not null && folder.Length >= rootPath.Length; folder = Path.GetDirectoryName(folder))
        {
            var projects = Directory.GetFiles(folder, "*.csproj");
            if (projects.Length > 0)
            {
                return projects[0];
            }
        }

        return null;
    }

    [GeneratedRegex(@"\s+", RegexOptions.CultureInvariant)]
    private static partial Regex WhiteSpace();
}
