using System.Xml.Linq;
using LeaseSimulation.Reporting;

namespace LeaseSimulation.Tests.Reporting;

public sealed class SvgLineChartTests
{
    [Fact]
    public void ToSvg_IsWellFormed_WithOneLinePerSeries_AndEscapedText()
    {
        var chart = new SvgLineChart("in flight <&> lost", "time (s)", "messages");
        chart.AddSeries("fifo in flight", [(0, 0), (3, 10), (6, 40)], "#d62728");
        chart.AddSeries("fifo lost", [(0, 0), (3, 0), (6, 5)], "#d62728", dashed: true);

        var svg = XDocument.Parse(chart.ToSvg());

        XNamespace ns = "http://www.w3.org/2000/svg";
        svg.Descendants(ns + "polyline").Should().HaveCount(2);
        svg.Descendants(ns + "text").Select(t => t.Value).Should().Contain("in flight <&> lost");
    }

    [Fact]
    public void AddSeries_WithoutName_Throws()
    {
        var chart = new SvgLineChart("t", "x", "y");

        chart.Invoking(c => c.AddSeries(" ", [], "#000")).Should().Throw<ArgumentException>().Which.ParamName.Should().Be("name");
    }
}
