using System.Text.Json;
using LeaseSimulation.Cli;

namespace LeaseSimulation.Tests.Cli;

/// <summary>
/// The default run end to end, its demonstration at a tenth of its scale (about 3 s of wall time): the two tables, a
/// verdict per demonstration row and the JSON of every run. Outcomes on the real clock are not asserted here (at this
/// scale the machine's load may decide them; <see cref="DemoMarginTests"/> checks the margins deterministically).
/// </summary>
public sealed class DefaultRunTests
{
    [Fact]
    public void TheDefaultRun_PrintsTheVirtualTable_TheDemonstration_AndAVerdictPerRow()
    {
        var json = Path.Combine(Path.GetTempPath(), $"lease-sim-default-{Guid.NewGuid():N}.json");
        var output = new StringWriter();
        try
        {
            var exitCode = SimulationCommand.Execute(["--time-scale", "0.01", "--no-progress", "--json", json], output, new StringWriter());

            exitCode.Should().Be(0);
            var text = output.ToString();
            text.Should().Contain("The seed's table on one thread, virtual time")
                .And.Contain("| single-thread | fifo       | virtual |")
                .And.Contain("Real clock, --time-scale 0.01")
                .And.Contain("| starved-pool  | pump     | real  |")
                .And.Contain("--full, 7.5 to 11 minutes");
            text.IndexOf("virtual time", StringComparison.Ordinal).Should().BeLessThan(text.IndexOf("Real clock", StringComparison.Ordinal));
            var verdicts = text.Split('\n').Where(l => l.Contains("as expected (", StringComparison.Ordinal) || l.Contains("UNEXPECTED", StringComparison.Ordinal)).ToList();
            verdicts.Should().HaveCount(9);
            using var document = JsonDocument.Parse(File.ReadAllText(json));
            var runs = document.RootElement.EnumerateArray().ToList();
            runs.Should().HaveCount(21);
            runs.Take(12).Should().OnlyContain(r => r.GetProperty("clock").GetString() == "virtual");
            runs.Skip(12).Should().OnlyContain(r => r.GetProperty("clock").GetString() == "real" && r.GetProperty("cpuMode").GetString() == "sleep");
        }
        finally
        {
            File.Delete(json);
        }
    }
}
