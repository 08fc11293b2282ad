using System.Xml.Linq;
using LeaseSimulation.Reporting;
using LeaseSimulation.Results;
using LeaseSimulation.Tracking;

namespace LeaseSimulation.Tests.Reporting;

public sealed class TimelineChartTests
{
    private static readonly XNamespace Svg = "http://www.w3.org/2000/svg";

    [Fact]
    public void ToSvg_IsAnSvgDocument_WithTheTitle_AndALegendEntryPerLine()
    {
        var results = new[] { Result("fifo", lost: 5), Result("pump", lost: 0) };

        var svg = XDocument.Parse(TimelineChart.ToSvg("in flight <&> lost", results));

        svg.Root!.Name.Should().Be(Svg + "svg");
        var texts = svg.Descendants(Svg + "text").Select(t => t.Value.Trim()).ToList();
        texts.Should().Contain("in flight <&> lost")
            .And.Contain("fifo in flight").And.Contain("fifo lost")
            .And.Contain("pump in flight").And.Contain("pump lost")
            .And.Contain("scenario time (s)").And.Contain("messages");
    }

    [Fact]
    public void AddLine_WithoutName_Throws()
    {
        var plot = LineChart.Create("t", "x", "y");

        FluentActions.Invoking(() => LineChart.AddLine(plot, " ", [], LineChart.ColorOf(0)))
            .Should().Throw<ArgumentException>().Which.ParamName.Should().Be("name");
    }

    private static SimulationResult Result(string strategy, int lost) => new()
    {
        Context = "single-thread",
        Strategy = strategy,
        Clock = "virtual",
        CpuMs = 1000,
        Messages = 40,
        Completed = 40 - lost,
        Lost = lost,
        TotalSeconds = 6,
        MeanMessageSeconds = 1,
        MaxLeaseLatenessMs = 0,
        CpuLimitSeconds = 6,
        LowerBoundSeconds = 6,
        Timeline = [new TimelineSample(0, 0, 0, 0, 0), new TimelineSample(3, 10, 10, 0, 0), new TimelineSample(6, 40, 40 - lost, 0, lost)],
    };
}
