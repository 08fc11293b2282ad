using LeaseSimulation.Cli;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Tests.Cli;

/// <summary>What the bare command runs, which options keep it and which choose the matrix instead.</summary>
public sealed class DefaultRunPlannerTests
{
    [Theory]
    [InlineData("")]
    [InlineData("--no-progress")]
    [InlineData("--time-scale 0.2")]
    [InlineData("--json out/r.json --report out --monitor --no-progress")]
    public void WithoutAnOptionThatChoosesRuns_TheDefaultRunApplies(string commandLine)
    {
        DefaultRunPlanner.AppliesTo(Parse(commandLine)).Should().BeTrue();
    }

    [Theory]
    [InlineData("--full")]
    [InlineData("--sweep")]
    [InlineData("--context all")]
    [InlineData("--context thread-pool")]
    [InlineData("--strategy all")]
    [InlineData("--strategy pump")]
    [InlineData("--clock real")]
    [InlineData("--broker memory")]
    [InlineData("--broker-latency 0")]
    [InlineData("--messages 100")]
    [InlineData("--loops 20")]
    [InlineData("--cpu-ms 1000")]
    [InlineData("--io-ms 1000")]
    [InlineData("--receive-ms 100")]
    [InlineData("--renew-ms 2000")]
    [InlineData("--lease-ms 5000")]
    [InlineData("--cpu-mode work")]
    [InlineData("--threads 4")]
    [InlineData("--seed 1")]
    public void AnOptionThatChoosesRuns_RunsTheMatrixInstead(string commandLine)
    {
        DefaultRunPlanner.AppliesTo(Parse(commandLine)).Should().BeFalse();
    }

    [Theory]
    [InlineData("--context single-thread --strategy all --messages 20 --loops 5 --no-progress")]
    [InlineData("--messages 20 --loops 5 --cpu-ms 100 --time-scale 0.02 --no-progress")]
    [InlineData("--broker postgres --connection Host=127.0.0.1;Username=sim --context single-thread --messages 20 --loops 5 --cpu-ms 100 --time-scale 0.1 --no-progress")]
    public void TheCiCommandLines_StillRunTheMatrix(string commandLine)
    {
        var options = Parse(commandLine);

        DefaultRunPlanner.AppliesTo(options).Should().BeFalse();
        MatrixPlanner.Plan(options).Should().NotBeEmpty().And.OnlyContain(r => r.Settings.Messages == 20 && r.Settings.Loops == 5);
    }

    [Fact]
    public void TheVirtualTimePart_IsTheSeedsTable_ForEveryStrategy()
    {
        var plan = DefaultRunPlanner.Plan(new CommandLineOptions());

        plan.VirtualTime.Should().OnlyContain(r =>
            r.Settings.Context == ContextKind.SingleThread && r.Settings.Clock == ClockKind.Virtual && r.Settings.Loops == 20
            && r.Settings.IoTime == TimeSpan.FromSeconds(1) && r.Settings.LeaseDuration == TimeSpan.FromSeconds(5)
            && r.Settings.RenewInterval == TimeSpan.FromSeconds(2));
        plan.VirtualTime.Select(r => (r.Strategy.Name, (int)r.Settings.CpuTime.TotalMilliseconds, r.Settings.Messages)).Should().Equal(
            ("fifo", 100, 100), ("seed-yield", 100, 100), ("priority", 100, 100), ("pump", 100, 100),
            ("fifo", 1000, 100), ("seed-yield", 1000, 100), ("priority", 1000, 100), ("pump", 1000, 100),
            ("priority", 100, 300), ("pump", 100, 300), ("priority", 1000, 300), ("pump", 1000, 300));
    }

    [Fact]
    public void TheVirtualTimePart_IsTheFullMatrixOnOneThread()
    {
        var full = MatrixPlanner.Plan(new CommandLineOptions { Full = true })
            .Where(r => r.Settings.Context == ContextKind.SingleThread)
            .Select(r => (r.Settings, r.Strategy.Name));

        DefaultRunPlanner.Plan(new CommandLineOptions()).VirtualTime.Select(r => (r.Settings, r.Strategy.Name)).Should().Equal(full);
    }

    [Fact]
    public void TheDemonstration_IsShortScaledRealClockRows_InThreeContexts_WithTheirExpectations()
    {
        var plan = DefaultRunPlanner.Plan(new CommandLineOptions());

        plan.Demonstration.Should().OnlyContain(d =>
            d.Run.Settings.Clock == ClockKind.Real && d.Run.Settings.TimeScale == 0.1 && d.Run.Settings.CpuMode == CpuMode.Sleep
            && d.Run.Settings.Messages == 10 && d.Run.Settings.Loops == 5 && d.Run.Settings.CpuTime == TimeSpan.FromSeconds(1)
            && d.Run.Settings.LeaseDuration == TimeSpan.FromSeconds(5) && d.Run.Settings.RenewInterval == TimeSpan.FromSeconds(2)
            && d.Reason.Length > 0);
        plan.Demonstration.Select(d => (d.Run.Settings.Context, d.Run.Strategy.Name, d.Expected)).Should().Equal(
            (ContextKind.SingleThread, "fifo", ExpectedOutcome.LosesLeases),
            (ContextKind.SingleThread, "priority", ExpectedOutcome.LosesNone),
            (ContextKind.SingleThread, "pump", ExpectedOutcome.LosesNone),
            (ContextKind.ThreadPool, "fifo", ExpectedOutcome.LosesNone),
            (ContextKind.ThreadPool, "priority", ExpectedOutcome.LosesNone),
            (ContextKind.ThreadPool, "pump", ExpectedOutcome.LosesNone),
            (ContextKind.StarvedPool, "fifo", ExpectedOutcome.LosesLeases),
            (ContextKind.StarvedPool, "priority", ExpectedOutcome.LosesNone),
            (ContextKind.StarvedPool, "pump", ExpectedOutcome.LosesNone));
    }

    [Fact]
    public void TimeScale_SetsTheDemonstrationsScale_AndLeavesVirtualTimeAlone()
    {
        var plan = DefaultRunPlanner.Plan(Parse("--time-scale 0.25"));

        plan.Demonstration.Should().OnlyContain(d => d.Run.Settings.TimeScale == 0.25);
        plan.VirtualTime.Select(r => r.Settings).Should().Equal(DefaultRunPlanner.Plan(new CommandLineOptions()).VirtualTime.Select(r => r.Settings));
    }

    [Fact]
    public void AnOutOfRangeTimeScale_IsRefused_NamingTheOption()
    {
        var act = () => DefaultRunPlanner.Plan(new CommandLineOptions { TimeScale = 5000 });

        act.Should().Throw<OptionException>().Where(e => e.Option == "--time-scale" && e.Message.Contains("--time-scale", StringComparison.Ordinal));
    }

    [Fact]
    public void Full_PlansTheWholeMatrix()
    {
        var options = Parse("--full");
        var plan = MatrixPlanner.Plan(options);

        plan.Select(r => r.Settings.Context).Distinct().Should().Equal(ContextKind.SingleThread, ContextKind.ThreadPool, ContextKind.StarvedPool, ContextKind.Hosted);
        plan.Should().HaveCount(44, "12 single-thread rows, 12 hosted, and 10 for each pool (8 at 100 messages, 2 at 300 with 100 ms CPU)");
        plan.Where(r => r.Settings.Context.IsOneThread()).Should().OnlyContain(r => r.Settings.Clock == ClockKind.Virtual);
        plan.Where(r => !r.Settings.Context.IsOneThread()).Should().OnlyContain(r =>
            r.Settings.Clock == ClockKind.Real && r.Settings.TimeScale == SimulationSettings.DefaultTimeScale && r.Settings.CpuMode == CpuMode.Work);
    }

    [Fact]
    public void Full_WithSweep_IsRefused_NamingFull()
    {
        var act = () => SweepPlanner.Plan(Parse("--full --sweep"));

        act.Should().Throw<OptionException>().Where(e => e.Option == "--full" && e.Message.Contains("--sweep", StringComparison.Ordinal));
    }

    [Fact]
    public void Full_WithSweep_ExitsWithCode2()
    {
        var error = new StringWriter();

        SimulationCommand.Execute(["--full", "--sweep"], new StringWriter(), error).Should().Be(2);

        error.ToString().Should().StartWith("error: Option --full cannot be combined with --sweep");
    }

    private static CommandLineOptions Parse(string commandLine) =>
        SimulationCommand.Parse(commandLine.Split(' ', StringSplitOptions.RemoveEmptyEntries));
}
