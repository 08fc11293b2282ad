using System.Globalization;
using System.Xml.Linq;
using LeaseSimulation.Reporting;
using LeaseSimulation.Results;

namespace LeaseSimulation.Tests.Reporting;

public sealed class SweepChartTests
{
    private static readonly XNamespace Svg = "http://www.w3.org/2000/svg";

    [Fact]
    public void ToSvg_PlacesCpuTimesOnALogScale_AndNamesOffScalePoints()
    {
        var results = new[] { 10, 100, 1000 }
            .SelectMany(cpu => new[] { Result("priority", cpu, 1.0), Result("pump", cpu, cpu == 10 ? 16.8 : 1.1) })
            .ToList();

        var svg = XDocument.Parse(SweepChart.ToSvg("sweep", results));

        var texts = svg.Descendants(Svg + "text").ToList();
        var ticks = texts
            .Where(t => t.Value.Trim() is "10" or "100" or "1000")
            .Select(TranslatedX)
            .ToList();
        ticks.Should().HaveCount(3);
        (ticks[1] - ticks[0]).Should().BeApproximately(ticks[2] - ticks[1], 0.05, "each decade is as wide as the next on a log scale");
        texts.Select(t => t.Value.Trim()).Should().Contain("pump (>3: 16.8)").And.Contain("priority");
    }

    /// <summary>Where a text is placed: the chart writes each text as <c>transform="translate(x y)"</c>.</summary>
    private static double TranslatedX(XElement text)
    {
        var transform = text.Attribute("transform")!.Value;
        transform.Should().StartWith("translate(");
        return double.Parse(transform["translate(".Length..].Split(' ')[0], CultureInfo.InvariantCulture);
    }

    private static SimulationResult Result(string strategy, double cpuMs, double totalOverBound) => new()
    {
        Context = "single-thread",
        Strategy = strategy,
        Clock = "virtual",
        CpuMs = cpuMs,
        Messages = 10,
        Completed = 10,
        Lost = 0,
        TotalSeconds = 100 * totalOverBound,
        MeanMessageSeconds = 1,
        MaxLeaseLatenessMs = 0,
        CpuLimitSeconds = 100,
        LowerBoundSeconds = 100,
    };
}
