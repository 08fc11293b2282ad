using LeaseSimulation.Cli;
using LeaseSimulation.Tests.Support;

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
    public void BadOption_ExitsWithCode2_AndNamesTheOption(string commandLine, string option) =>
        UsageErrors.ShouldBeRefusedNaming(commandLine, option);

    [Theory]
    [InlineData("--frobnicate", "error: Unknown option --frobnicate; see --help.")]
    [InlineData("--messages 20 --frobnicate=3", "error: Unknown option --frobnicate=3; see --help.")]
    [InlineData("--messages", "error: Option --messages needs a value.")]
    [InlineData("--messages --loops 5", "error: Option --messages needs a value.")]
    [InlineData("--json", "error: Option --json needs a value.")]
    [InlineData("--loops 5 --loops 6", "error: Option --loops is given twice.")]
    [InlineData("--monitor yes", "error: Option --monitor takes no value.")]
    [InlineData("--messages 20 extra", "error: Unexpected argument 'extra'; see --help.")]
    [InlineData("--strategy magic", "error: Option --strategy has the value 'magic'; expected fifo, seed-yield, priority, pump, processor, processor-guide, processor-keeper, receiver-keeper or all.")]
    public void BadCommandLine_PrintsExactlyOneLine(string commandLine, string expected)
    {
        var output = new StringWriter();
        var error = new StringWriter();

        SimulationCommand.Execute(commandLine.Split(' '), output, error).Should().Be(2);

        error.ToString().Should().Be(expected + Environment.NewLine, "one line, not the help");
        output.ToString().Should().BeEmpty();
    }

    [Theory]
    [InlineData("--help")]
    [InlineData("-h")]
    [InlineData("--help --frobnicate")]
    [InlineData("--messages 0 --help")]
    public void Help_ExitsWithCode0_AndRunsNothing(string commandLine)
    {
        var output = new StringWriter();
        var error = new StringWriter();

        SimulationCommand.Execute(commandLine.Split(' '), output, error).Should().Be(0);

        var help = output.ToString();
        help.Should().Contain("Usage:").And.Contain("--time-scale <F>").And.Contain("--strategy <NAME>").And.Contain("The consumer strategy: fifo, seed-yield, priority, pump,").And.Contain("processor-guide, processor-keeper, receiver-keeper or");
        help.Should().NotContain("completed", "help runs no simulation");
        error.ToString().Should().BeEmpty();
    }

    [Fact]
    public void Help_ListsEveryOption_WithItsDescription()
    {
        var output = new StringWriter();

        SimulationCommand.Execute(["--help"], output, new StringWriter());

        var help = output.ToString();
        foreach (var option in new[]
        {
            "--context", "--strategy", "--clock", "--broker", "--connection", "--broker-latency", "--time-scale", "--messages",
            "--loops", "--cpu-ms", "--io-ms", "--receive-ms", "--renew-ms", "--lease-ms", "--cpu-mode", "--threads", "--seed",
            "--json", "--report", "--monitor", "--no-progress", "--sweep", "--full",
        })
        {
            help.Split('\n').Should().Contain(line => line.TrimStart().StartsWith(option + " ", StringComparison.Ordinal) && line.Trim().Length > option.Length + 20, $"{option} is listed with a description");
        }
    }
}
