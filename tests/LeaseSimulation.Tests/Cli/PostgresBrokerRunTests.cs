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
            // "Loses nothing" holds when the process was never held back as long as the renewal margin: at scale 0.5 a lease
            // of 2.5 s is renewed with 1.5 s left, and a renewal may wait for one 50 ms CPU operation. A longer stop of the
            // whole process, which the probe measures (a loaded CI machine: 1 of 12 lost once under .ci/stress.sh
            // --under-load, load 8-17), is one no consumer survives; then only that every message ended once is asserted.
            // The same holds for the server, another process on the same cores: priority lost 1 of 12 once more under
            // .ci/stress.sh --under-load (load 13) with the test process never held back more than 39 ms. So the claim
            // is gated on the longest pause plus the server's longest round trip (ServerRoundTripProbe), plus the run's own
            // worst renewal lateness (how much later than its interval a renewal was sent, which a thread pool slow to
            // bring back answers shows): the pump lost 4 of 12 once in CI with the process held back 43 ms and the server
            // answering within 76 ms. Renewals sent in time and answered in time with a lease lost is a bug, and fails.
            var margin = TimeSpan.FromMilliseconds(1500 - 50);
            using var probe = PauseProbe.Start();
            using var server = ServerRoundTripProbe.Start(PostgresServer.Require());
            var exitCode = SimulationCommand.Execute(
                ["--broker", "postgres", "--connection", PostgresServer.Require(), "--context", "single-thread", "--strategy", "all",
                 "--messages", "12", "--loops", "5", "--cpu-ms", "100", "--cpu-mode", "sleep", "--time-scale", "0.5", "--json", json, "--no-progress"],
                output,
                error);
            var pause = probe.LongestPause;
            var serverRoundTrip = server.LongestRoundTrip;

            exitCode.Should().Be(0, "stderr: {0}", error);
            using var document = JsonDocument.Parse(File.ReadAllText(json));
            var runs = document.RootElement.EnumerateArray().ToList();
            runs.Select(r => r.GetProperty("strategy").GetString()).Should().Contain(["fifo", "priority", "pump"]);
            runs.Should().OnlyContain(r => r.GetProperty("broker").GetString() == "postgres" && r.GetProperty("clock").GetString() == "real");
            foreach (var run in runs.Where(r => r.GetProperty("strategy").GetString() is "priority" or "pump"))
            {
                var strategy = run.GetProperty("strategy").GetString();
                var lost = run.GetProperty("lost").GetInt32();
                var completed = run.GetProperty("completed").GetInt32();
                var lateness = TimeSpan.FromMilliseconds(run.GetProperty("maxLeaseLatenessMs").GetDouble() * 0.5); // scenario ms at scale 0.5
                (completed + lost).Should().Be(12, "every message of {0} ends once", strategy);
                if (serverRoundTrip < margin && pause + serverRoundTrip + lateness < margin)
                {
                    lost.Should().Be(0, "{0} keeps its leases on the real server (longest stop of the process {1:0} ms, longest server round trip {2:0} ms, worst renewal lateness {3:0} ms, margin {4:0} ms; the run: {5})", strategy, pause.TotalMilliseconds, serverRoundTrip.TotalMilliseconds, lateness.TotalMilliseconds, margin.TotalMilliseconds, run.ToString());
                }
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
