namespace PriorityAsync.DocsCompile;

/// <summary>One fenced C# block of a page, with the marker line right above it (empty when there is none).</summary>
internal sealed record CodeBlock(string Page, int Line, string Marker, string Code)
{
    /// <summary>Gets where the block starts, as <c>page:line</c> of its opening fence.</summary>
    public string Location => $"{Page}:{Line}";

    /// <summary>Reads every block fenced with <c>```csharp</c> (or <c>```cs</c>, <c>```c#</c>) from a Markdown page.</summary>
    public static IEnumerable<CodeBlock> Read(string root, string page)
    {
        var lines = File.ReadAllLines(Path.Combine(root, page));
        for (var i = 0; i < lines.Length; i++)
        {
            var fence = lines[i].Trim();
            if (!fence.StartsWith("```", StringComparison.Ordinal))
            {
                continue;
            }

            var language = fence[3..].Trim().ToLowerInvariant();
            var end = Array.FindIndex(lines, i + 1, l => l.Trim().StartsWith("```", StringComparison.Ordinal));
            if (end < 0)
            {
                throw new InvalidDataException($"{page}:{i + 1}: a code fence that is never closed");
            }

            if (language is "csharp" or "cs" or "c#")
            {
                var marker = i > 0 ? lines[i - 1].Trim() : string.Empty;
                yield return new CodeBlock(page, i + 1, marker, string.Join('\n', lines[(i + 1)..end]));
            }

            i = end;
        }
    }
}
