using System.Text.RegularExpressions;

namespace PriorityAsync.DocsCompile;

/// <summary>One fenced C# block of a page, with the marker line right above it (empty when there is none).</summary>
internal sealed partial record CodeBlock(string Page, int Line, string Marker, string Code)
{
    /// <summary>Gets where the block starts, as <c>page:line</c> of its opening fence.</summary>
    public string Location => $"{Page}:{Line}";

    /// <summary>
    /// Reads every block fenced with <c>```csharp</c> (or <c>```cs</c>, <c>```c#</c>) from a Markdown page. A fence is a
    /// line of three or more backticks and an info string without backticks (CommonMark), so inline code such as
    /// <c>```` ```csharp ````</c> is not one; a block ends at a line of at least as many backticks and nothing else.
    /// </summary>
    /// <exception cref="InvalidDataException">A fence is never closed.</exception>
    public static IEnumerable<CodeBlock> Read(string root, string page)
    {
        var lines = File.ReadAllLines(Path.Combine(root, page));
        var blocks = new List<CodeBlock>();
        for (var i = 0; i < lines.Length; i++)
        {
            var opening = Opening().Match(lines[i]);
            if (!opening.Success)
            {
                continue;
            }

            var ticks = opening.Groups[1].Value.Length;
            var end = Array.FindIndex(lines, i + 1, l => Closing().Match(l) is { Success: true } m && m.Groups[1].Value.Length >= ticks);
            if (end < 0)
            {
                throw new InvalidDataException($"{page}:{i + 1}: a code fence that is never closed");
            }

            if (opening.Groups[2].Value.Trim().ToLowerInvariant() is "csharp" or "cs" or "c#")
            {
                var marker = i > 0 ? lines[i - 1].Trim() : string.Empty;
                blocks.Add(new CodeBlock(page, i + 1, marker, string.Join('\n', lines[(i + 1)..end])));
            }

            i = end;
        }

        return blocks;
    }

    [GeneratedRegex(@"^\s*(`{3,})([^`]*)$", RegexOptions.CultureInvariant)]
    private static partial Regex Opening();

    [GeneratedRegex(@"^\s*(`{3,})\s*$", RegexOptions.CultureInvariant)]
    private static partial Regex Closing();
}
