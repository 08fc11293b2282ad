using LeaseSimulation.Cli;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Tests.Cli;

/// <summary>
/// The demonstration's one-thread rows replayed on virtual time, where nothing but their ordering decides: the FIFO
/// consumer loses leases with no noise at all (noise only delays its renewals further), and the others keep every
/// lease with enough slack left that the real clock at the demonstration's scale would need a stall of more than
/// <see cref="MinimumHeadroomMs"/> ms of wall time to lose one.
/// </summary>
public sealed class DemoMarginTests
{
    private const double MinimumHeadroomMs = 150;

    [Fact]
    public void OnVirtualTime_TheNaiveConsumer_LosesMostLeases()
    {
        var (row, result) = RunOnVirtualTime("fifo");

        row.Expected.Should().Be(ExpectedOutcome.LosesLeases);
        result.Lost.Should().BeGreaterThanOrEqualTo(result.Messages / 2);
        result.MaxLeaseLatenessMs.Should().BeGreaterThan(Slack(row).TotalMilliseconds, "a renewal already misses the lease without any noise");
    }

    [Theory]
    [InlineData("priority")]
    [InlineData("pump")]
    public void OnVirtualTime_PriorityAndPump_KeepEveryLease_WithWallTimeToSpare(string strategy)
    {
        var (row, result) = RunOnVirtualTime(strategy);

        row.Expected.Should().Be(ExpectedOutcome.LosesNone);
        result.Lost.Should().Be(0);
        result.Completed.Should().Be(result.Messages);
        result.MaxLeaseLatenessMs.Should().BeLessThanOrEqualTo(row.Run.Settings.CpuTime.TotalMilliseconds + 100, "a renewal waits for at most the CPU slice running (and the pump's broker calls)");
        var headroomMs = (Slack(row).TotalMilliseconds - result.MaxLeaseLatenessMs) * DefaultRunPlanner.DemoTimeScale;
        headroomMs.Should().BeGreaterThanOrEqualTo(MinimumHeadroomMs);
    }

    private static TimeSpan Slack(DemoRun row) => row.Run.Settings.LeaseDuration - row.Run.Settings.RenewInterval;

    private static (DemoRun Row, LeaseSimulation.Results.SimulationResult Result) RunOnVirtualTime(string strategy)
    {
        var row = DefaultRunPlanner.Plan(new CommandLineOptions()).Demonstration
            .Single(d => d.Run.Settings.Context == ContextKind.SingleThread && d.Run.Strategy.Name == strategy);
        var result = SimulationRunner.Run(row.Run.Settings with { Clock = ClockKind.Virtual }, row.Run.Strategy);
        return (row, result);
    }
}
