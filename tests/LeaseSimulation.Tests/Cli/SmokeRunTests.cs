using System.Text.Json;
using LeaseSimulation.Cli;

namespace LeaseSimulation.Tests.Cli;

public sealed class SmokeRunTests
{
    [Fact]
    public void SingleThreadRun_PrintsTheTable_AndWritesJson()
    {
        var json = Path.Combine(Path.GetTempPath(), $"lease-sim-{Guid.NewGuid():N}.json");
        var output = new StringWriter();
        try
        {
            var exitCode = SimulationCommand.Execute(
                ["--context", "single-thread", "--messages", "20", "--loops", "5", "--json", json, "--no-progress"],
                output,
                new StringWriter());

            exitCode.Should().Be(0);
            output.ToString().Should().Contain("| single-thread | priority");
            using var document = JsonDocument.Parse(File.ReadAllText(json));
            var runs = document.RootElement.EnumerateArray().ToList();
            runs.Should().NotBeEmpty();
            foreach (var field in new[] { "context", "strategy", "broker", "clock", "cpuMs", "messages", "completed", "lost", "totalSeconds", "meanMessageSeconds", "maxLeaseLatenessMs", "cpuLimitSeconds", "lowerBoundSeconds" })
            {
                runs[0].TryGetProperty(field, out _).Should().BeTrue(field);
            }

            foreach (var run in runs)
            {
                var bound = run.GetProperty("lowerBoundSeconds").GetDouble();
                bound.Should().BeGreaterThan(0);
                if (run.GetProperty("lost").GetInt32() == 0)
                {
                    run.GetProperty("totalSeconds").GetDouble().Should().BeGreaterThanOrEqualTo(bound, "no run that completes every message beats its lower bound");
                }
            }
        }
        finally
        {
            File.Delete(json);
        }
    }
}
