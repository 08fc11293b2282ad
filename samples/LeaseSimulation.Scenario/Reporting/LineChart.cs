using ScottPlot;
using SkiaSharp;

namespace LeaseSimulation.Reporting;

/// <summary>
/// What the simulation's charts share: a ScottPlot line chart of one size, one colour per strategy, the legend to the
/// right of the plot, written as an SVG document (text stays text, so a chart can be searched and diffed).
/// </summary>
public static class LineChart
{
    /// <summary>The chart's width in pixels.</summary>
    public const int Width = 860;

    /// <summary>The chart's height in pixels.</summary>
    public const int Height = 420;

    /// <summary>
    /// The first of a few common sans-serif families this machine has. Without a name ScottPlot asks for a family
    /// that Linux lacks and gets the first font SkiaSharp finds, which can be a serif one.
    /// </summary>
    private static readonly string SansFont =
        new[] { "DejaVu Sans", "Liberation Sans", "Arial", "Helvetica", "Segoe UI" }
            .FirstOrDefault(name => SKFontManager.Default.FontFamilies.Contains(name, StringComparer.OrdinalIgnoreCase))
            ?? Fonts.Sans;

    private static readonly Color[] Palette =
        [Color.FromHex("#d62728"), Color.FromHex("#ff7f0e"), Color.FromHex("#1f77b4"), Color.FromHex("#2ca02c"), Color.FromHex("#9467bd"), Color.FromHex("#8c564b")];

    /// <summary>Creates an empty chart with a title and axis labels.</summary>
    /// <param name="title">The title above the plot.</param>
    /// <param name="xLabel">The x axis label.</param>
    /// <param name="yLabel">The y axis label.</param>
    /// <returns>The plot.</returns>
    public static Plot Create(string title, string xLabel, string yLabel)
    {
        ArgumentNullException.ThrowIfNull(title);
        ArgumentNullException.ThrowIfNull(xLabel);
        ArgumentNullException.ThrowIfNull(yLabel);
        var plot = new Plot();
        plot.Font.Set(SansFont);
        plot.Title(title);
        plot.XLabel(xLabel);
        plot.YLabel(yLabel);
        return plot;
    }

    /// <summary>The colour of the <paramref name="index"/>-th strategy (the palette repeats).</summary>
    /// <param name="index">The strategy's index; not negative.</param>
    /// <returns>The colour.</returns>
    public static Color ColorOf(int index)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(index);
        return Palette[index % Palette.Length];
    }

    /// <summary>Adds a line with a legend entry.</summary>
    /// <param name="plot">The plot.</param>
    /// <param name="name">The legend entry.</param>
    /// <param name="points">The points, in x order.</param>
    /// <param name="color">The line's colour.</param>
    /// <param name="dashed">Whether to dash the line.</param>
    public static void AddLine(Plot plot, string name, IReadOnlyList<(double X, double Y)> points, Color color, bool dashed = false)
    {
        ArgumentNullException.ThrowIfNull(plot);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ArgumentNullException.ThrowIfNull(points);
        var line = plot.Add.ScatterLine(points.Select(p => p.X).ToArray(), points.Select(p => p.Y).ToArray(), color);
        line.LegendText = name;
        line.LineWidth = 2;
        line.LinePattern = dashed ? LinePattern.Dashed : LinePattern.Solid;
    }

    /// <summary>Renders <paramref name="plot"/> as an SVG document, the legend to the right.</summary>
    /// <param name="plot">The plot.</param>
    /// <returns>The SVG document.</returns>
    public static string ToSvg(Plot plot)
    {
        ArgumentNullException.ThrowIfNull(plot);
        plot.ShowLegend(Edge.Right);
        return plot.GetSvgXml(Width, Height);
    }
}
