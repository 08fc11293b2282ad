using LeaseSimulation.Cli;
using LeaseSimulation.Settings;
using LeaseSimulation.Tests.Support;

namespace LeaseSimulation.Tests.ServiceBus;

/// <summary><c>--broker servicebus</c> on the command line: what it plans, and the bad combinations (exit code 2, one line naming the option).</summary>
public sealed class ServiceBusOptionTests
{
    private const string NoEntityPath = "Endpoint=sb://example.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=a2V5";

    [Fact]
    public void ServiceBusBroker_Parses_AndPlansTheSixServiceBusStrategies_OnTheRealClock_InEveryContext()
    {
        var options = SimulationCommand.Parse(["--broker", "servicebus", "--messages", "4", "--cpu-ms", "100"]);

        options.Broker.Should().Be(BrokerKind.ServiceBus);
        options.Connection.Should().BeNull("without --connection the run starts the in-process test broker");
        var plan = MatrixPlanner.Plan(options);
        plan.Select(p => p.Strategy.Name).Distinct().Should().Equal("fifo", "pump", "processor", "processor-guide", "processor-keeper", "receiver-keeper");
        plan.Select(p => p.Settings.Context).Distinct().Should().BeEquivalentTo(Enum.GetValues<ContextKind>());
        plan.Should().OnlyContain(p => p.Settings.Broker == BrokerKind.ServiceBus && p.Settings.Clock == ClockKind.Real && p.Settings.Messages == 4);
        plan.Should().HaveCount(6 * 4, "no 3x scale rows on Service Bus");
    }

    [Fact]
    public void ServiceBusBroker_AcceptsAConnectionStringNamingAQueue()
    {
        var connection = NoEntityPath + ";EntityPath=orders";
        var options = SimulationCommand.Parse(["--broker", "servicebus", "--connection", connection, "--strategy", "processor", "--context", "thread-pool", "--cpu-ms", "100"]);

        var plan = MatrixPlanner.Plan(options);

        plan.Should().ContainSingle().Which.Settings.BrokerConnection.Should().Be(connection);
    }

    [Fact]
    public void ProcessorStrategies_AreLeftOutOfAllOnOtherBrokers()
    {
        var plan = MatrixPlanner.Plan(SimulationCommand.Parse(["--context", "single-thread", "--messages", "3", "--cpu-ms", "100"]));

        plan.Select(p => p.Strategy.Name).Should().NotContain(["processor", "processor-guide", "processor-keeper", "receiver-keeper"]);
    }

    [Theory]
    [InlineData("--broker servicebus --clock virtual", "--broker")]
    [InlineData("--broker servicebus --broker-latency 20", "--broker-latency")]
    [InlineData("--broker servicebus --connection Endpoint=nonsense", "--connection")]
    [InlineData("--broker servicebus --connection " + NoEntityPath, "--connection")]
    [InlineData("--broker servicebus --strategy priority", "--strategy")]
    [InlineData("--broker servicebus --strategy seed-yield", "--strategy")]
    [InlineData("--strategy processor", "--strategy")]
    [InlineData("--broker postgres --connection Host=127.0.0.1 --strategy processor-guide", "--strategy")]
    [InlineData("--broker servicebus --sweep", "--broker")]
    public void BadServiceBusCommandLine_ExitsWithCode2_AndNamesTheOption(string commandLine, string option) =>
        UsageErrors.ShouldBeRefusedNaming(commandLine, option);

    [Fact]
    public void ProcessorOnTheMemoryBroker_SaysItNeedsServiceBus()
    {
        var error = new StringWriter();

        SimulationCommand.Execute(["--strategy", "processor"], new StringWriter(), error).Should().Be(SimulationCommand.UsageError);

        error.ToString().Should().Be("error: Option --strategy processor needs --broker servicebus (it is the Azure SDK's ServiceBusProcessor)." + Environment.NewLine);
    }

    [Fact]
    public void ServiceBusSettings_WithTheVirtualClock_AreRejected_NamingTheBroker()
    {
        var settings = new SimulationSettings { Broker = BrokerKind.ServiceBus, Clock = ClockKind.Virtual };

        var act = settings.Validate;

        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be(nameof(SimulationSettings.Broker));
    }
}
