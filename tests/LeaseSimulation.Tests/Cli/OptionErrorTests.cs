using LeaseSimulation.Cli;

namespace LeaseSimulation.Tests.Cli;

/// <summary>Bad command lines exit with code 2 and a one-line message naming the option.</summary>
public sealed class OptionErrorTests
{
    [Theory]
    [InlineData("--frobnicate", "--frobnicate")]
    [InlineData("--messages abc", "--messages")]
    [InlineData("--messages 0", "--messages")]
    [InlineData("--messages", "--messages")]
    [InlineData("--context everywhere", "--context")]
    [InlineData("--strategy magic", "--strategy")]
    [InlineData("--clock sundial", "--clock")]
    [InlineData("--cpu-mode 3", "--cpu-mode")]
    [InlineData("--time-scale 0", "--time-scale")]
    [InlineData("--clock virtual --context thread-pool", "--clock")]
    [InlineData("--clock virtual", "--clock")]
    [InlineData("--renew-ms 5000 --lease-ms 4000", "--lease-ms")]
    [InlineData("--loops 5 --loops 6", "--loops")]
    [InlineData("--monitor=yes", "--monitor")]
    [InlineData("--broker mongo", "--broker")]
    [InlineData("--broker postgres", "--connection")]
    [InlineData("--connection Host=127.0.0.1", "--connection")]
    [InlineData("--broker postgres --connection Hots=127.0.0.1", "--connection")]
    [InlineData("--broker postgres --connection Host=127.0.0.1 --clock virtual", "--broker")]
    public void BadOption_ExitsWithCode2_AndNamesTheOption(string commandLine, string option)
    {
        var output = new StringWriter();
        var error = new StringWriter();

        var exitCode = SimulationCommand.Execute(commandLine.Split(' '), output, error);

        exitCode.Should().Be(SimulationCommand.UsageError);
        var message = error.ToString();
        message.Should().Contain(option);
        message.TrimEnd().Should().NotContain("\n", "the message is one line");
        output.ToString().Should().BeEmpty();
    }

    [Fact]
    public void Help_ExitsWithCode0()
    {
        var output = new StringWriter();

        SimulationCommand.Execute(["--help"], output, new StringWriter()).Should().Be(0);
        output.ToString().Should().Contain("--time-scale");
    }
}
