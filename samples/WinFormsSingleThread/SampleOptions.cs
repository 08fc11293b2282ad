using System.Globalization;

namespace WinFormsSingleThread;

/// <summary>The sample's few options.</summary>
internal sealed record SampleOptions
{
    public const string Usage = """
        Usage: WinFormsSingleThread [--headless] [--strategy fifo|seed-yield|priority|pump] [--cpu-ms N]
                                    [--messages N] [--loops N] [--clock virtual|real] [--time-scale F]
          On Windows without --headless: a window with a start button, a strategy choice and live counters.
          Elsewhere (or with --headless): runs the single-thread scenario and prints the counters every 3 s of
          scenario time. Defaults: priority, 1000 ms CPU, 100 messages, 20 loops, virtual clock.
        """;

    public bool Headless { get; init; } = !OperatingSystem.IsWindows();

    public bool Help { get; init; }

    public string Strategy { get; init; } = "priority";

    public int CpuMs { get; init; } = 1000;

    public int Messages { get; init; } = 100;

    public int Loops { get; init; } = 20;

    public bool RealClock { get; init; }

    public double TimeScale { get; init; } = 0.05;

    public static SampleOptions Parse(IReadOnlyList<string> args)
    {
        var options = new SampleOptions();
        for (var i = 0; i < args.Count; i++)
        {
            var option = args[i];
            string Value() => i + 1 < args.Count ? args[++i] : throw new ArgumentException($"Option {option} needs a value.", option);
            options = option switch
            {
                "--headless" => options with { Headless = true },
                "--help" or "-h" => options with { Help = true },
                "--strategy" => options with { Strategy = Value() },
                "--cpu-ms" => options with { CpuMs = Int(option, Value(), 0) },
                "--messages" => options with { Messages = Int(option, Value(), 1) },
                "--loops" => options with { Loops = Int(option, Value(), 1) },
                "--clock" => Value() switch
                {
                    "virtual" => options with { RealClock = false },
                    "real" => options with { RealClock = true },
                    var other => throw new ArgumentException($"Option --clock has the value '{other}'; expected virtual or real.", option),
                },
                "--time-scale" => options with { TimeScale = Scale(option, Value()) },
                _ => throw new ArgumentException($"Unknown option {option}; see --help.", option),
            };
        }

        LeaseSimulation.Strategies.StrategyCatalog.Get(options.Strategy);
        return options;
    }

    private static int Int(string option, string value, int minimum) =>
        int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var result) && result >= minimum
            ? result
            : throw new ArgumentException($"Option {option} has the value '{value}'; expected a whole number of at least {minimum}.", option);

    private static double Scale(string option, string value) =>
        double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out var result) && result > 0 && result <= 1000
            ? result
            : throw new ArgumentException($"Option {option} has the value '{value}'; expected a number greater than 0.", option);
}
