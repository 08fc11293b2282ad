using System.Text;

namespace LeaseSimulation.Reporting;

/// <summary>Lays out a markdown table with aligned columns (readable as plain text too): text columns first, left-aligned; numbers right-aligned.</summary>
internal static class MarkdownTable
{
    /// <summary>Formats <paramref name="headers"/> and <paramref name="rows"/>; the first <paramref name="textColumns"/> columns are left-aligned.</summary>
    /// <param name="headers">The column headers.</param>
    /// <param name="rows">The rows, each with one cell per header.</param>
    /// <param name="textColumns">How many leading columns hold text.</param>
    /// <returns>The table, one line per row, ending with a newline.</returns>
    public static string Format(IReadOnlyList<string> headers, IReadOnlyList<string[]> rows, int textColumns)
    {
        var widths = headers.Select((h, i) => Math.Max(h.Length, rows.Count == 0 ? 0 : rows.Max(r => r[i].Length))).ToArray();
        var text = new StringBuilder();
        AppendRow(text, headers, widths, textColumns);
        AppendRow(text, [.. widths.Select((w, i) => i < textColumns ? new string('-', w) : new string('-', w - 1) + ":")], widths, textColumns);
        foreach (var row in rows)
        {
            AppendRow(text, row, widths, textColumns);
        }

        return text.ToString();
    }

    private static void AppendRow(StringBuilder text, IReadOnlyList<string> cells, int[] widths, int textColumns)
    {
        text.Append('|');
        for (var i = 0; i < cells.Count; i++)
        {
            text.Append(' ');
            text.Append(i < textColumns ? cells[i].PadRight(widths[i]) : cells[i].PadLeft(widths[i]));
            text.Append(" |");
        }

        text.Append('\n');
    }
}
