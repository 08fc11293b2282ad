using System.CommandLine;
using LeaseSimulation.Arguments;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Tests.Cli;

/// <summary>
/// The options both samples share and <see cref="CommandLineRunner"/>, composed as the WinForms sample composes them
/// (that sample is not referenced from here: on Windows it targets net10.0-windows; CI smoke-runs it).
/// </summary>
public sealed class ScenarioOptionsTests
{
    [Fact]
    public void Defaults_AreUsed_WhenTheOptionsAreMissing()
    {
        var (command, read) = WinFormsLike();

        var parseResult = CommandLineRunner.Parse(command, []);

        CommandLineRunner.FirstError(parseResult).Should().BeNull();
        read(parseResult).Should().Be(("priority", 1000, ClockKind.Virtual, 0.05));
    }

    [Fact]
    public void Values_AreRead()
    {
        var (command, read) = WinFormsLike();

        var parseResult = CommandLineRunner.Parse(command, ["--strategy", "FIFO", "--cpu-ms", "100", "--clock", "real", "--time-scale", "0.5"]);

        read(parseResult).Should().Be(("fifo", 100, ClockKind.Real, 0.5));
    }

    [Theory]
    [InlineData("--strategy all", "--strategy")]
    [InlineData("--strategy", "--strategy")]
    [InlineData("--cpu-ms -1", "--cpu-ms")]
    [InlineData("--clock sundial", "--clock")]
    [InlineData("--time-scale 1001", "--time-scale")]
    [InlineData("--headless=yes", "--headless")]
    [InlineData("--bogus", "--bogus")]
    public void BadCommandLine_ExitsWith2_AndOneLineNamingTheOption(string commandLine, string option)
    {
        var (command, _) = WinFormsLike();
        var output = new StringWriter();
        var error = new StringWriter();

        CommandLineRunner.Run(command, commandLine.Split(' '), output, error).Should().Be(CommandLineRunner.UsageError);

        error.ToString().Should().StartWith("error: ").And.Contain(option);
        error.ToString().TrimEnd().Should().NotContain("\n");
        output.ToString().Should().BeEmpty();
    }

    [Fact]
    public void Help_ExitsWith0_AndShowsTheDefaults()
    {
        var (command, _) = WinFormsLike();
        var output = new StringWriter();

        CommandLineRunner.Run(command, ["--help"], output, new StringWriter()).Should().Be(0);

        output.ToString().Should().Contain("--strategy <fifo|seed-yield|priority|pump>").And.Contain("[default: 1000]");
    }

    [Fact]
    public void Run_ReturnsTheActionsExitCode()
    {
        var (command, _) = WinFormsLike();
        command.SetAction(_ => 7);

        CommandLineRunner.Run(command, ["--cpu-ms", "5"], new StringWriter(), new StringWriter()).Should().Be(7);
    }

    private static (RootCommand Command, Func<ParseResult, (string?, int, ClockKind, double)> Read) WinFormsLike()
    {
        var headless = ScenarioOptions.Flag("--headless", "Run without a window.");
        var strategy = ScenarioOptions.Strategy(acceptsAll: false);
        strategy.DefaultValueFactory = _ => "priority";
        var cpuMs = ScenarioOptions.CpuMs();
        cpuMs.DefaultValueFactory = _ => 1000;
        var clock = ScenarioOptions.Clock();
        clock.DefaultValueFactory = _ => ClockKind.Virtual;
        var timeScale = ScenarioOptions.TimeScale();
        timeScale.DefaultValueFactory = _ => 0.05;
        var command = new RootCommand("test") { headless, strategy, cpuMs, clock, timeScale };
        command.SetAction(_ => 0);
        return (command, p => (p.GetValue(strategy), p.GetValue(cpuMs), p.GetValue(clock), p.GetValue(timeScale)));
    }
}
