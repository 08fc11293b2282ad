using System.CommandLine;
using LeaseSimulation.Arguments;
using LeaseSimulation.Settings;

namespace WinFormsSingleThread;

/// <summary>The sample's few options: the shared ones of <see cref="ScenarioOptions"/> plus <c>--headless</c>.</summary>
internal sealed record SampleOptions
{
    public bool Headless { get; init; } = !OperatingSystem.IsWindows();

    public string Strategy { get; init; } = "priority";

    public int CpuMs { get; init; } = 1000;

    public int Messages { get; init; } = 100;

    public int Loops { get; init; } = 20;

    public bool RealClock { get; init; }

    public double TimeScale { get; init; } = 0.05;

    /// <summary>Creates the root command (System.CommandLine), declaring every option with its default once.</summary>
    /// <param name="run">Runs the sample with the parsed options; returns the exit code.</param>
    /// <returns>The command.</returns>
    public static RootCommand CreateCommand(Func<SampleOptions, int> run)
    {
        var defaults = new SampleOptions();
        var headless = ScenarioOptions.Flag("--headless", "Run without a window (always so outside Windows).");
        var strategy = Defaulted(ScenarioOptions.Strategy(acceptsAll: false), defaults.Strategy);
        var cpuMs = Defaulted(ScenarioOptions.CpuMs(), defaults.CpuMs);
        var messages = Defaulted(ScenarioOptions.Messages(), defaults.Messages);
        var loops = Defaulted(ScenarioOptions.Loops(), defaults.Loops);
        var clock = Defaulted(ScenarioOptions.Clock(), defaults.RealClock ? ClockKind.Real : ClockKind.Virtual);
        var timeScale = Defaulted(ScenarioOptions.TimeScale(), defaults.TimeScale);
        var command = new RootCommand(
            "The seed's WinForms variant: the lost-lease consumer on one UI thread, FIFO versus PriorityAsync lanes. "
            + "On Windows without --headless: a window with a start button, a strategy choice and live counters. "
            + "Elsewhere (or with --headless): runs the single-thread scenario and prints the counters every 3 s of scenario time.")
        {
            headless, strategy, cpuMs, messages, loops, clock, timeScale,
        };
        command.SetAction(parseResult => run(new SampleOptions
        {
            Headless = defaults.Headless || parseResult.GetValue(headless),
            Strategy = parseResult.GetValue(strategy) ?? defaults.Strategy,
            CpuMs = parseResult.GetValue(cpuMs),
            Messages = parseResult.GetValue(messages),
            Loops = parseResult.GetValue(loops),
            RealClock = parseResult.GetValue(clock) == ClockKind.Real,
            TimeScale = parseResult.GetValue(timeScale),
        }));
        return command;
    }

    private static Option<T> Defaulted<T>(Option<T> option, T value)
    {
        option.DefaultValueFactory = _ => value;
        return option;
    }
}
