using LeaseSimulation.Cli;
using LeaseSimulation.Results;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Tests.Cli;

/// <summary>The demonstration's verdict per row, on made-up results (no run, no clock).</summary>
public sealed class DemoVerdictTests
{
    [Fact]
    public void ExpectedLosses_ThatHappen_AreAsExpected()
    {
        var verdict = DemoVerdict.Judge(Row(ContextKind.SingleThread, "fifo"), Result("fifo", completed: 3, lost: 7, latenessMs: 4000));

        verdict.AsExpected.Should().BeTrue();
        verdict.Text.Should().StartWith("single-thread fifo: lost 7 of 10, as expected (one FIFO queue")
            .And.Contain("worst renewal 4000 ms late of 3000 ms slack");
    }

    [Fact]
    public void ExpectedLosses_ThatDoNotHappen_AreUnexpected()
    {
        var verdict = DemoVerdict.Judge(Row(ContextKind.StarvedPool, "fifo"), Result("fifo", completed: 10, lost: 0, latenessMs: 900));

        verdict.AsExpected.Should().BeFalse();
        verdict.Text.Should().StartWith("single-thread fifo: UNEXPECTED, 0 lost (expected losses");
    }

    [Fact]
    public void NoLoss_WhereNoneIsExpected_GivesTheWallTimeHeadroom()
    {
        // (3000 ms of slack - 1100 ms of lateness) x 0.1 = 190 ms of wall time.
        var verdict = DemoVerdict.Judge(Row(ContextKind.SingleThread, "priority"), Result("priority", completed: 10, lost: 0, latenessMs: 1100));

        verdict.AsExpected.Should().BeTrue();
        verdict.Text.Should().Be(
            "single-thread priority: 0 lost, as expected (a renewal waits for at most the one CPU slice running; "
            + "worst renewal 1100 ms late of 3000 ms slack: 190 ms of wall time to spare).");
    }

    [Fact]
    public void ALoss_WhereNoneIsExpected_IsUnexpected_AndSaysWhatToDo()
    {
        var verdict = DemoVerdict.Judge(Row(ContextKind.ThreadPool, "pump"), Result("pump", completed: 9, lost: 1, latenessMs: 3400));

        verdict.AsExpected.Should().BeFalse();
        verdict.Text.Should().Contain("UNEXPECTED, lost 1 of 10, 9 completed")
            .And.Contain("300 ms of wall time at --time-scale 0.1")
            .And.Contain("larger --time-scale");
    }

    [Fact]
    public void ARunStoppedBeforeCompletingEveryMessage_IsUnexpected_EvenWithoutLosses()
    {
        var verdict = DemoVerdict.Judge(Row(ContextKind.ThreadPool, "priority"), Result("priority", completed: 8, lost: 0, latenessMs: 10));

        verdict.AsExpected.Should().BeFalse();
        verdict.Text.Should().Contain("UNEXPECTED, 0 lost, 8 completed");
    }

    private static DemoRun Row(ContextKind context, string strategy) =>
        DefaultRunPlanner.Plan(new CommandLineOptions()).Demonstration.Single(d => d.Run.Settings.Context == context && d.Run.Strategy.Name == strategy);

    private static SimulationResult Result(string strategy, int completed, int lost, double latenessMs) => new()
    {
        Context = "single-thread",
        Strategy = strategy,
        Clock = "real",
        CpuMs = 1000,
        Messages = 10,
        Completed = completed,
        Lost = lost,
        TotalSeconds = 50,
        MeanMessageSeconds = 10,
        MaxLeaseLatenessMs = latenessMs,
        CpuLimitSeconds = 50,
    };
}
