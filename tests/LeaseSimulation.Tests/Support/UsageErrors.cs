using LeaseSimulation.Cli;

namespace LeaseSimulation.Tests.Support;

/// <summary>The rule for a bad command line of the simulation: exit code 2, nothing on the output, one line naming the option.</summary>
internal static class UsageErrors
{
    /// <summary>Runs <paramref name="commandLine"/> (split on spaces) and asserts that it is refused as a usage error naming <paramref name="option"/>.</summary>
    public static void ShouldBeRefusedNaming(string commandLine, string option)
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
}
