using System.Diagnostics;

namespace PriorityAsync.Tests.Lifecycle;

/// <summary>
/// Each reproduction of a lifecycle failure runs in a child process (tests/LifecycleProbe): without the shutdown
/// contract every one of them aborts the process (exit code 134, "Unhandled exception ... accepts no more work"), which
/// would take the test host down with it. The child must exit 0 and print "ok": the process survived and every
/// awaiting piece of code resumed.
/// </summary>
public class ProcessSurvivalTests
{
    private static readonly TimeSpan ChildTimeout = TimeSpan.FromSeconds(90);

    public static TheoryData<string> Scenarios { get; } = new()
    {
        "run-then-complete",
        "run-then-dispose",
        "readme-quick-start",
        "dispose-async-inside-lane",
        "switch-to-completed-scheduler",
        "context-thread-join-with-pool-timer",
        "pump-handler-outlives-stop-and-dispose",
    };

    [Theory]
    [MemberData(nameof(Scenarios))]
    public async Task LateWork_NeverAbortsTheProcess_AndEveryAwaiterResumes(string scenario)
    {
        var (exitCode, output) = await RunProbeAsync(scenario);

        exitCode.Should().Be(0, $"the child process must survive the scenario; its output was:{Environment.NewLine}{output}");
        output.Should().StartWith($"ok {scenario}");
    }

    private static async Task<(int ExitCode, string Output)> RunProbeAsync(string scenario)
    {
        var configuration = new DirectoryInfo(AppContext.BaseDirectory).Parent!.Name; // bin/<configuration>/net10.0/
        var probe = Path.Combine(RepositoryRoot.Find(), "tests", "LifecycleProbe", "bin", configuration, "net10.0", "LifecycleProbe.dll");
        File.Exists(probe).Should().BeTrue($"the probe is built with the tests ({probe})");

        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(probe);
        start.ArgumentList.Add(scenario);
        using var process = Process.Start(start)!;
        var stdout = process.StandardOutput.ReadToEndAsync();
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(ChildTimeout);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"LifecycleProbe {scenario} hung for {ChildTimeout}; output so far: {await stdout}{await stderr}");
        }

        return (process.ExitCode, (await stdout) + (await stderr));
    }
}
