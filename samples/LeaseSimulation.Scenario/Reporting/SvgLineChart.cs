using System.Globalization;
using System.Security;
using System.Text;

namespace LeaseSimulation.Reporting;

/// <summary>
/// A minimal SVG line chart (axes, ticks, legend, solid or dashed lines), written by hand because ScottPlot does not
/// restore from this project's package mirror. No dependency.
/// </summary>
public sealed class SvgLineChart
{
    private const int Width = 860;
    private const int Height = 420;
    private const int Left = 64;
    private const int Right = 200;
    private const int Top = 40;
    private const int Bottom = 52;
    private readonly List<Series> _series = [];
    private IReadOnlyList<(double X, string Label)>? _xTicks;
    private double? _yMax;

    /// <summary>Creates an empty chart.</summary>
    /// <param name="title">The title above the plot.</param>
    /// <param name="xLabel">The x axis label.</param>
    /// <param name="yLabel">The y axis label.</param>
    public SvgLineChart(string title, string xLabel, string yLabel)
    {
        Title = title ?? throw new ArgumentNullException(nameof(title));
        XLabel = xLabel ?? throw new ArgumentNullException(nameof(xLabel));
        YLabel = yLabel ?? throw new ArgumentNullException(nameof(yLabel));
    }

    /// <summary>Gets the title.</summary>
    public string Title { get; }

    /// <summary>Gets the x axis label.</summary>
    public string XLabel { get; }

    /// <summary>Gets the y axis label.</summary>
    public string YLabel { get; }

    /// <summary>Adds a line.</summary>
    /// <param name="name">The legend entry.</param>
    /// <param name="points">The points, in x order.</param>
    /// <param name="color">An SVG colour, e.g. <c>#d62728</c>.</param>
    /// <param name="dashed">Whether to dash the line.</param>
    public void AddSeries(string name, IReadOnlyList<(double X, double Y)> points, string color, bool dashed = false)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ArgumentNullException.ThrowIfNull(points);
        ArgumentException.ThrowIfNullOrWhiteSpace(color);
        _series.Add(new Series(name, points, color, dashed));
    }

    /// <summary>Labels the x axis at the given positions instead of at five even steps (e.g. categories at 0, 1, 2 …).</summary>
    /// <param name="ticks">The positions and their labels.</param>
    public void SetXTicks(IReadOnlyList<(double X, string Label)> ticks)
    {
        ArgumentNullException.ThrowIfNull(ticks);
        _xTicks = ticks;
    }

    /// <summary>Fixes the top of the y axis instead of fitting it to the points; higher points are drawn at the top.</summary>
    /// <param name="yMax">The top of the y axis; positive.</param>
    public void SetYMax(double yMax)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(yMax);
        _yMax = yMax;
    }

    /// <summary>Renders the chart.</summary>
    /// <returns>The SVG document.</returns>
    public string ToSvg()
    {
        var points = _series.SelectMany(s => s.Points).ToList();
        var xMax = NiceCeiling(points.Count == 0 ? 1 : points.Max(p => p.X));
        var yMax = _yMax ?? NiceCeiling(points.Count == 0 ? 1 : points.Max(p => p.Y));
        var plotWidth = Width - Left - Right;
        var plotHeight = Height - Top - Bottom;
        double Px(double x) => Left + (x / xMax * plotWidth);
        double Py(double y) => Top + plotHeight - (Math.Min(y, yMax) / yMax * plotHeight);

        var svg = new StringBuilder();
        svg.Append(CultureInfo.InvariantCulture, $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{Height}\" viewBox=\"0 0 {Width} {Height}\" font-family=\"sans-serif\" font-size=\"12\">\n");
        svg.Append(CultureInfo.InvariantCulture, $"<rect width=\"{Width}\" height=\"{Height}\" fill=\"white\"/>\n");
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Width / 2}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{Escape(Title)}</text>\n");
        foreach (var (tick, label) in _xTicks ?? [.. Ticks(xMax).Select(t => (t, F(t)))])
        {
            svg.Append(CultureInfo.InvariantCulture, $"<line x1=\"{F(Px(tick))}\" y1=\"{Top}\" x2=\"{F(Px(tick))}\" y2=\"{Top + plotHeight}\" stroke=\"#e5e5e5\"/>\n");
            svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{F(Px(tick))}\" y=\"{Top + plotHeight + 16}\" text-anchor=\"middle\">{Escape(label)}</text>\n");
        }

        foreach (var tick in Ticks(yMax))
        {
            svg.Append(CultureInfo.InvariantCulture, $"<line x1=\"{Left}\" y1=\"{F(Py(tick))}\" x2=\"{Left + plotWidth}\" y2=\"{F(Py(tick))}\" stroke=\"#e5e5e5\"/>\n");
            svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left - 6}\" y=\"{F(Py(tick) + 4)}\" text-anchor=\"end\">{F(tick)}</text>\n");
        }

        svg.Append(CultureInfo.InvariantCulture, $"<rect x=\"{Left}\" y=\"{Top}\" width=\"{plotWidth}\" height=\"{plotHeight}\" fill=\"none\" stroke=\"#444\"/>\n");
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left + (plotWidth / 2)}\" y=\"{Height - 12}\" text-anchor=\"middle\">{Escape(XLabel)}</text>\n");
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"16\" y=\"{Top + (plotHeight / 2)}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {Top + (plotHeight / 2)})\">{Escape(YLabel)}</text>\n");
        for (var i = 0; i < _series.Count; i++)
        {
            var series = _series[i];
            var dash = series.Dashed ? " stroke-dasharray=\"6 4\"" : string.Empty;
            if (series.Points.Count > 0)
            {
                var path = string.Join(' ', series.Points.Select(p => $"{F(Px(p.X))},{F(Py(p.Y))}"));
                svg.Append(CultureInfo.InvariantCulture, $"<polyline fill=\"none\" stroke=\"{Escape(series.Color)}\" stroke-width=\"2\"{dash} points=\"{path}\"/>\n");
            }

            var legendY = Top + 10 + (i * 20);
            var legendX = Left + plotWidth + 14;
            svg.Append(CultureInfo.InvariantCulture, $"<line x1=\"{legendX}\" y1=\"{legendY}\" x2=\"{legendX + 24}\" y2=\"{legendY}\" stroke=\"{Escape(series.Color)}\" stroke-width=\"2\"{dash}/>\n");
            svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{legendX + 30}\" y=\"{legendY + 4}\">{Escape(series.Name)}</text>\n");
        }

        svg.Append("</svg>\n");
        return svg.ToString();
    }

    private static IEnumerable<double> Ticks(double max)
    {
        var step = max / 5;
        for (var i = 0; i <= 5; i++)
        {
            yield return step * i;
        }
    }

    private static double NiceCeiling(double value)
    {
        if (value <= 0)
        {
            return 1;
        }

        var magnitude = Math.Pow(10, Math.Floor(Math.Log10(value)));
        foreach (var factor in new[] { 1.0, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 })
        {
            if (factor * magnitude >= value)
            {
                return factor * magnitude;
            }
        }

        return 10 * magnitude;
    }

    private static string F(double value) => value.ToString("0.##", CultureInfo.InvariantCulture);

    private static string Escape(string text) => SecurityElement.Escape(text);

    private sealed record Series(string Name, IReadOnlyList<(double X, double Y)> Points, string Color, bool Dashed);
}
