using System.Text.Json;
using LeaseSimulation.Cli;

namespace LeaseSimulation.Tests.Cli;

/// <summary><c>--broker postgres</c>: the seed's consumers and the pump with the PostgreSQL server judging the leases.</summary>
public sealed class PostgresBrokerRunTests
{
    [PostgresFact]
    public void PostgresBroker_SmallSeedRun_PriorityAndPumpLoseNothing_AndJsonSaysPostgres()
    {
        var json = Path.Combine(Path.GetTempPath(), $"lease-sim-pg-{Guid.NewGuid():N}.json");
        var output = new StringWriter();
        var error = new StringWriter();
        try
        {
            // The seed's sleeping CPU (--cpu-mode sleep) and a 2.5 s lease (scale 0.5): this test is about the server judging
            // the leases. At scale 0.2 (a 1 s lease), with CI running every test assembly at once on 2 cores (the scale-out
            // test's three consumer processes on the same server among them), the pump lost 3 of 12 once and priority 1 of
            // 12 once: that measured the machine, not the consumers.
            var exitCode = SimulationCommand.Execute(
                ["--broker", "postgres", "--connection", PostgresServer.Require(), "--context", "single-thread", "--strategy", "all",
                 "--messages", "12", "--loops", "5", "--cpu-ms", "100", "--cpu-mode", "sleep", "--time-scale", "0.5", "--json", json, "--no-progress"],
                output,
                error);

            exitCode.Should().Be(0, "stderr: {0}", error);
            using var document = JsonDocument.Parse(File.ReadAllText(json));
            var runs = document.RootElement.EnumerateArray().ToList();
            runs.Select(r => r.GetProperty("strategy").GetString()).Should().Contain(["fifo", "priority", "pump"]);
            runs.Should().OnlyContain(r => r.GetProperty("broker").GetString() == "postgres" && r.GetProperty("clock").GetString() == "real");
            foreach (var run in runs.Where(r => r.GetProperty("strategy").GetString() is "priority" or "pump"))
            {
                run.GetProperty("lost").GetInt32().Should().Be(0, "{0} keeps its leases on the real server", run.GetProperty("strategy").GetString());
                run.GetProperty("completed").GetInt32().Should().Be(12);
            }
        }
        finally
        {
            File.Delete(json);
        }
    }

    [Fact]
    public void PostgresBroker_ServerUnreachable_ExitsWith1_AndSaysWhy()
    {
        var error = new StringWriter();
        var exitCode = SimulationCommand.Execute(
            ["--broker", "postgres", "--connection", "Host=127.0.0.1;Port=1;Timeout=1;Username=x;Password=y", "--context", "single-thread",
             "--strategy", "pump", "--messages", "2", "--loops", "1", "--cpu-ms", "1", "--no-progress"],
            new StringWriter(),
            error);

        exitCode.Should().Be(1);
        error.ToString().Should().Contain("PostgreSQL broker failed").And.Contain("transiently");
    }
}
