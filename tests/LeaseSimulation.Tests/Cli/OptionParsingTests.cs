using LeaseSimulation.Cli;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Tests.Cli;

/// <summary>Every option of the simulation reaches <see cref="CommandLineOptions"/>; options not given stay null.</summary>
public sealed class OptionParsingTests
{
    [Fact]
    public void NoOptions_LeaveEverythingToTheMatrix()
    {
        SimulationCommand.Parse([]).Should().BeEquivalentTo(new CommandLineOptions());
    }

    [Fact]
    public void EveryOption_IsRead()
    {
        var options = SimulationCommand.Parse(
        [
            "--context", "thread-pool", "--strategy", "Priority", "--clock", "real", "--broker", "postgres",
            "--connection", "Host=127.0.0.1;Port=5433", "--broker-latency", "35ms", "--time-scale", "0.02", "--messages", "20",
            "--loops", "5", "--cpu-ms", "100", "--io-ms", "900", "--receive-ms", "50", "--renew-ms", "1500", "--lease-ms", "4000",
            "--cpu-mode", "spin", "--threads", "3", "--seed", "-7", "--json", "out/r.json", "--report", "out", "--monitor",
            "--no-progress", "--sweep", "--full",
        ]);

        options.Should().BeEquivalentTo(new CommandLineOptions
        {
            Contexts = [ContextKind.ThreadPool],
            Strategies = ["priority"],
            Clock = ClockKind.Real,
            Broker = BrokerKind.Postgres,
            Connection = "Host=127.0.0.1;Port=5433",
            BrokerLatencyMs = 35,
            TimeScale = 0.02,
            Messages = 20,
            Loops = 5,
            CpuMs = 100,
            IoMs = 900,
            ReceiveMs = 50,
            RenewMs = 1500,
            LeaseMs = 4000,
            CpuMode = CpuMode.Spin,
            Threads = 3,
            Seed = -7,
            JsonPath = "out/r.json",
            ReportDirectory = "out",
            Monitor = true,
            NoProgress = true,
            Sweep = true,
            Full = true,
        });
    }

    [Theory]
    [InlineData("--context=single-thread", ContextKind.SingleThread)]
    [InlineData("--context:starved-pool", ContextKind.StarvedPool)]
    public void InlineValues_AreAccepted(string argument, ContextKind expected)
    {
        SimulationCommand.Parse([argument]).Contexts.Should().Equal(expected);
    }

    [Fact]
    public void All_IsEveryContextAndStrategy_Explicitly()
    {
        var options = SimulationCommand.Parse(["--context", "all", "--strategy", "all"]);

        options.Contexts.Should().Equal(ContextKind.SingleThread, ContextKind.ThreadPool, ContextKind.StarvedPool, ContextKind.Hosted);
        options.Strategies.Should().Equal("fifo", "seed-yield", "priority", "pump", "processor", "processor-guide", "processor-keeper", "receiver-keeper");
        MatrixPlanner.Plan(options).Select(r => (r.Settings, r.Strategy.Name)).Should()
            .Equal(MatrixPlanner.Plan(new CommandLineOptions()).Select(r => (r.Settings, r.Strategy.Name)), "all plans what leaving the option out plans");
    }

    [Fact]
    public void AnArgumentStartingWithAt_IsAValue_NotAResponseFile()
    {
        SimulationCommand.Parse(["--json", "@results.json"]).JsonPath.Should().Be("@results.json");
    }

    [Fact]
    public void BadOption_ThrowsAnOptionException_NamingIt()
    {
        var act = () => SimulationCommand.Parse(["--loops", "0"]);

        act.Should().Throw<OptionException>().Where(e => e.Option == "--loops" && e.Message.Contains("--loops", StringComparison.Ordinal));
    }
}
