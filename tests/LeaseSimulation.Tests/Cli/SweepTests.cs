using LeaseSimulation.Cli;
using LeaseSimulation.Reporting;
using LeaseSimulation.Settings;
using LeaseSimulation.Tests.Support;

namespace LeaseSimulation.Tests.Cli;

/// <summary><c>--sweep</c>: its planner, its table and its chart.</summary>
public sealed class SweepTests
{
    [Theory]
    [InlineData("--sweep --cpu-ms 100", "--cpu-ms")]
    [InlineData("--sweep --context thread-pool", "--context")]
    [InlineData("--sweep --clock real", "--clock")]
    [InlineData("--sweep --broker postgres --connection Host=127.0.0.1", "--broker")]
    [InlineData("--sweep --messages 0", "--messages")]
    [InlineData("--sweep=yes", "--sweep")]
    public void BadCombination_ExitsWithCode2_AndNamesTheOption(string commandLine, string option) =>
        UsageErrors.ShouldBeRefusedNaming(commandLine, option);

    [Fact]
    public void Plan_RunsEveryStrategyAtEveryCpuTime_OnOneThreadAndVirtualTime()
    {
        var plan = SweepPlanner.Plan(SimulationCommand.Parse(["--sweep"]));

        plan.Should().HaveCount(SweepPlanner.CpuTimesMs.Count * LeaseSimulation.Strategies.StrategyCatalog.All.Count(s => s.Supports(BrokerKind.Memory)));
        plan.Select(p => (int)p.Settings.CpuTime.TotalMilliseconds).Distinct().Should().Equal(SweepPlanner.CpuTimesMs);
        plan.Should().OnlyContain(p => p.Settings.Context == ContextKind.SingleThread && p.Settings.Clock == ClockKind.Virtual && p.Settings.Messages == 100);
    }

    [Fact]
    public void Plan_KeepsMessages()
    {
        SweepPlanner.Plan(SimulationCommand.Parse(["--sweep", "--messages", "7"])).Should().OnlyContain(p => p.Settings.Messages == 7);
    }

    [Fact]
    public void SmallSweep_PrintsARowPerCpuTime_AndWritesTheCharts()
    {
        var directory = Path.Combine(Path.GetTempPath(), $"lease-sweep-{Guid.NewGuid():N}");
        var output = new StringWriter();
        try
        {
            var exitCode = SimulationCommand.Execute(["--sweep", "--messages", "5", "--loops", "2", "--report", directory], output, new StringWriter());

            exitCode.Should().Be(0);
            var text = output.ToString();
            text.Should().Contain("| cpu ms | lower bound s | binds |");
            foreach (var strategy in LeaseSimulation.Strategies.StrategyCatalog.All.Where(s => s.Supports(BrokerKind.Memory)))
            {
                text.Should().Contain($" {strategy.Name} total/bound | {strategy.Name} lost |");
            }

            foreach (var cpu in SweepPlanner.CpuTimesMs)
            {
                text.Split('\n').Should().Contain(line => line.StartsWith($"| {cpu} | ", StringComparison.Ordinal), $"the sweep has a row for {cpu} ms");
            }

            var chart = System.Xml.Linq.XDocument.Load(Path.Combine(directory, SweepReport.TotalChartName));
            chart.Root!.Name.LocalName.Should().Be("svg");
            var texts = chart.Root.Descendants(chart.Root.Name.Namespace + "text").Select(t => t.Value.Trim()).ToList();
            texts.Should().Contain("3000").And.Contain(t => t.StartsWith("pump", StringComparison.Ordinal));
            File.Exists(Path.Combine(directory, SweepReport.LostChartName)).Should().BeTrue();
            File.ReadAllText(Path.Combine(directory, SweepReport.FileName)).Should().Contain(SweepReport.TotalChartName);
        }
        finally
        {
            if (Directory.Exists(directory))
            {
                Directory.Delete(directory, recursive: true);
            }
        }
    }
}
