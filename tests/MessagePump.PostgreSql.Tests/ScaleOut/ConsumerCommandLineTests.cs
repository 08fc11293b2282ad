using System.Diagnostics;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.ScaleOut;

/// <summary>The consumer sample's command line (System.CommandLine, like the other samples): no server needed.</summary>
public class ConsumerCommandLineTests
{
    [Theory]
    [InlineData("--bogus", "--bogus")]
    [InlineData("--queue q --lock-ms -5", "--lock-ms")]
    [InlineData("--queue q --io-ms many", "--io-ms")]
    [InlineData("--lock-ms 5", "--queue")]
    public void BadCommandLine_ExitsWith2_AndOneLineNamingTheOption(string arguments, string option)
    {
        var (exitCode, output, error) = Run(arguments);

        exitCode.Should().Be(2, output);
        var lines = error.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        lines.Should().ContainSingle().Which.Should().StartWith("error: ").And.Contain(option);
    }

    [Fact]
    public void Help_ExitsWith0_AndListsEveryOption()
    {
        var (exitCode, output, _) = Run("--help");

        exitCode.Should().Be(0);
        output.Should().ContainAll("--connection", "--queue", "--lock-ms", "--max-deliveries", "--io-ms", "--cpu-ms", "--poison-prefix", "--max-in-flight");
    }

    private static (int ExitCode, string Output, string Error) Run(string arguments)
    {
        var start = new ProcessStartInfo("dotnet", $"\"{ConsumerProcess.ConsumerDll()}\" {arguments}")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var process = Process.Start(start)!;
        var output = process.StandardOutput.ReadToEndAsync();
        var error = process.StandardError.ReadToEnd();
        process.WaitForExit(60_000).Should().BeTrue("the consumer ends at once on a bad command line or --help");
        return (process.ExitCode, output.Result, error);
    }
}
