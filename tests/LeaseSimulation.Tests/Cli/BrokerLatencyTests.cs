using System.Text.Json;
using LeaseSimulation.Cli;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Tests.Cli;

/// <summary><c>--broker-latency</c>: parsing, the matrix default, the JSON field and a pump run on a slow broker.</summary>
public sealed class BrokerLatencyTests
{
    [Theory]
    [InlineData("20ms", 20)]
    [InlineData("20", 20)]
    [InlineData("0ms", 0)]
    [InlineData("2147483647ms", int.MaxValue)]
    public void Parse_AcceptsMilliseconds(string value, int expected)
    {
        SimulationCommand.Parse(["--broker-latency", value]).BrokerLatencyMs.Should().Be(expected);
    }

    [Theory]
    [InlineData("--broker-latency -5ms")]
    [InlineData("--broker-latency=-5")]
    [InlineData("--broker-latency 2147483648ms")]
    [InlineData("--broker-latency 99999999999999999999")]
    [InlineData("--broker-latency 1.5ms")]
    [InlineData("--broker-latency 20s")]
    [InlineData("--broker-latency")]
    [InlineData("--broker-latency 5 --broker postgres --connection Host=127.0.0.1")]
    [InlineData("--broker-latency 2000000000 --clock real --context thread-pool --time-scale 1000")]
    public void BadValue_ExitsWithCode2_AndNamesTheOption(string commandLine)
    {
        var output = new StringWriter();
        var error = new StringWriter();

        SimulationCommand.Execute(commandLine.Split(' '), output, error).Should().Be(SimulationCommand.UsageError);
        error.ToString().Should().Contain("--broker-latency");
        error.ToString().TrimEnd().Should().NotContain("\n", "the message is one line");
        output.ToString().Should().BeEmpty();
    }

    [Fact]
    public void Matrix_Defaults_To20Ms()
    {
        MatrixPlanner.Plan(new CommandLineOptions()).Should().OnlyContain(p => p.Settings.BrokerLatency == TimeSpan.FromMilliseconds(MatrixPlanner.DefaultBrokerLatencyMs));
        MatrixPlanner.DefaultBrokerLatencyMs.Should().Be(20);
    }

    [Fact]
    public void Json_ReportsTheLatency_OnThePumpRowsOnly()
    {
        var json = Path.Combine(Path.GetTempPath(), $"lease-sim-{Guid.NewGuid():N}.json");
        var output = new StringWriter();
        try
        {
            var exitCode = SimulationCommand.Execute(
                ["--context", "single-thread", "--messages", "3", "--loops", "2", "--cpu-ms", "100", "--broker-latency", "35ms", "--json", json],
                output,
                new StringWriter());

            exitCode.Should().Be(0);
            output.ToString().Should().Contain("Broker latency: 35 ms").And.Contain("broker latency ms");
            using var document = JsonDocument.Parse(File.ReadAllText(json));
            foreach (var run in document.RootElement.EnumerateArray())
            {
                var expected = run.GetProperty("strategy").GetString() == "pump" ? 35 : 0;
                run.GetProperty("brokerLatencyMs").GetDouble().Should().Be(expected);
            }
        }
        finally
        {
            File.Delete(json);
        }
    }

    [Theory]
    [InlineData(100)]
    [InlineData(1000)]
    public void Pump_OnOneThread_With20MsLatency_CompletesEveryMessage_AndLosesNone(int cpuMs)
    {
        var settings = new SimulationSettings
        {
            Messages = 12,
            Loops = 4,
            CpuTime = TimeSpan.FromMilliseconds(cpuMs),
            BrokerLatency = TimeSpan.FromMilliseconds(20),
        };

        var result = SimulationRunner.Run(settings, StrategyCatalog.Get("pump"));

        result.Lost.Should().Be(0);
        result.Completed.Should().Be(12);
        result.StoppedAtDeadline.Should().BeFalse();
        result.BrokerLatencyMs.Should().Be(20);
    }
}
