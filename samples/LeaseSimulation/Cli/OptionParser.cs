using System.Globalization;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Cli;

/// <summary>Parses the command line; any unknown option or bad value throws an <see cref="OptionException"/> naming it.</summary>
public static class OptionParser
{
    /// <summary>The help text.</summary>
    public const string Usage = """
        Usage: LeaseSimulation [options]
          --context single-thread|thread-pool|starved-pool|all   (default: all)
          --strategy fifo|seed-yield|priority|pump|all            (default: all)
          --clock virtual|real          (default: virtual on single-thread, real elsewhere; virtual needs single-thread)
          --broker memory|postgres      who judges leases: the embedded in-memory default, or a PostgreSQL server
                                        (real clock; e.g. --time-scale 0.1 for 500 ms locks)
          --connection STRING           the Npgsql connection string of --broker postgres
          --broker-latency D            latency of every receive, renew and settle call of the in-memory broker,
                                        in ms of scenario time: 20ms or 20 (default 20ms). Applies to the strategy
                                        that goes through that broker: pump. fifo, seed-yield and priority simulate
                                        their broker calls themselves (--receive-ms) and ignore it; so does postgres
          --time-scale F                real-clock scale, 0.01 turns 1000 ms into 10 ms (default 0.04)
          --messages N                  messages in the queue (default 100, plus a 3x row for priority)
          --loops N                     CPU+IO iterations per message (default 20)
          --cpu-ms N                    CPU operation (default: both 100 and 1000)
          --io-ms N                     IO operation (default 1000)
          --receive-ms N                receive time (default 100)
          --renew-ms N                  renew interval (default 2000)
          --lease-ms N                  lease duration (default 5000)
          --cpu-mode work|sleep|spin    how a CPU operation holds its thread on the real clock (default work):
                                        work  = conserved CPU work: burn CPU until the thread's own CPU time
                                                (clock_gettime CLOCK_THREAD_CPUTIME_ID) has advanced by the scaled
                                                time, so a descheduled thread takes longer (spin where unsupported)
                                        sleep = Thread.Sleep, the seed's blocking operation (no CPU used)
                                        spin  = burn CPU for the scaled wall time, however little CPU it got
          --threads N                   workers of the multi-thread priority scheduler (default: processor count, at least 4)
          --seed N                      seed of the IO-time jitter (default 1)
          --json PATH                   write the results as JSON
          --report DIR                  write a markdown report and an SVG chart
          --monitor                     print the monitor's counters every 3 s of scenario time
          --no-progress                 no live progress display for real-time runs
          --sweep                       run the strategies over CPU ms 10, 50, 100, 300, 1000, 3000 on one thread
                                        (virtual time, --messages default 100) and print total / lower bound
                                        and lost per strategy;
                                        with --report DIR also draw it (sweep-total-over-bound.svg, sweep-lost.svg)
          --help                        this text
        """;

    /// <summary>Parses <paramref name="args"/>.</summary>
    /// <param name="args">The command-line arguments.</param>
    /// <returns>The options.</returns>
    /// <exception cref="OptionException">An option is unknown, repeated, lacks its value or has a bad value.</exception>
    public static CommandLineOptions Parse(IReadOnlyList<string> args)
    {
        ArgumentNullException.ThrowIfNull(args);
        var options = new CommandLineOptions();
        var seen = new HashSet<string>(StringComparer.Ordinal);
        for (var i = 0; i < args.Count; i++)
        {
            var option = args[i];
            string? inlineValue = null;
            var equals = option.IndexOf('=', StringComparison.Ordinal);
            if (option.StartsWith("--", StringComparison.Ordinal) && equals > 0)
            {
                inlineValue = option[(equals + 1)..];
                option = option[..equals];
            }

            if (!seen.Add(option))
            {
                throw new OptionException(option, $"Option {option} is given twice.");
            }

            string Value()
            {
                if (inlineValue is not null)
                {
                    return inlineValue;
                }

                if (i + 1 >= args.Count || args[i + 1].StartsWith("--", StringComparison.Ordinal))
                {
                    throw new OptionException(option, $"Option {option} needs a value.");
                }

                return args[++i];
            }

            options = option switch
            {
                "--context" => options with { Contexts = ParseContexts(option, Value()) },
                "--strategy" => options with { Strategies = ParseStrategies(option, Value()) },
                "--clock" => options with { Clock = ParseEnum<ClockKind>(option, Value(), "virtual|real") },
                "--time-scale" => options with { TimeScale = ParseScale(option, Value()) },
                "--broker" => options with { Broker = ParseEnum<BrokerKind>(option, Value(), "memory|postgres") },
                "--connection" => options with { Connection = ParsePath(option, Value()) },
                "--broker-latency" => options with { BrokerLatencyMs = ParseMilliseconds(option, Value()) },
                "--messages" => options with { Messages = ParseInt(option, Value(), 1) },
                "--loops" => options with { Loops = ParseInt(option, Value(), 1) },
                "--cpu-ms" => options with { CpuMs = ParseInt(option, Value(), 0) },
                "--io-ms" => options with { IoMs = ParseInt(option, Value(), 0) },
                "--receive-ms" => options with { ReceiveMs = ParseInt(option, Value(), 0) },
                "--renew-ms" => options with { RenewMs = ParseInt(option, Value(), 1) },
                "--lease-ms" => options with { LeaseMs = ParseInt(option, Value(), 1) },
                "--cpu-mode" => options with { CpuMode = ParseEnum<CpuMode>(option, Value(), "work|sleep|spin") },
                "--threads" => options with { Threads = ParseInt(option, Value(), 1) },
                "--seed" => options with { Seed = ParseInt(option, Value(), int.MinValue) },
                "--json" => options with { JsonPath = ParsePath(option, Value()) },
                "--report" => options with { ReportDirectory = ParsePath(option, Value()) },
                "--monitor" => Flag(options with { Monitor = true }, option, inlineValue),
                "--no-progress" => Flag(options with { NoProgress = true }, option, inlineValue),
                "--sweep" => Flag(options with { Sweep = true }, option, inlineValue),
                "--help" or "-h" => Flag(options with { Help = true }, option, inlineValue),
                _ => throw new OptionException(option, $"Unknown option {option}; see --help."),
            };
        }

        return options;
    }

    private static CommandLineOptions Flag(CommandLineOptions options, string option, string? inlineValue) =>
        inlineValue is null ? options : throw new OptionException(option, $"Option {option} takes no value.");

    private static IReadOnlyList<ContextKind>? ParseContexts(string option, string value)
    {
        if (string.Equals(value, "all", StringComparison.OrdinalIgnoreCase))
        {
            return null;
        }

        return SettingNames.TryParseContext(value, out var context)
            ? [context]
            : throw new OptionException(option, $"Option {option} has the value '{value}'; expected single-thread, thread-pool, starved-pool or all.");
    }

    private static IReadOnlyList<string>? ParseStrategies(string option, string value)
    {
        if (string.Equals(value, "all", StringComparison.OrdinalIgnoreCase))
        {
            return null;
        }

        var known = LeaseSimulation.Strategies.StrategyCatalog.All.Select(s => s.Name).ToArray();
        return known.Contains(value, StringComparer.OrdinalIgnoreCase)
            ? [value.ToLowerInvariant()]
            : throw new OptionException(option, $"Option {option} has the value '{value}'; expected {string.Join(", ", known)} or all.");
    }

    private static T ParseEnum<T>(string option, string value, string expected)
        where T : struct, Enum =>
        Enum.TryParse<T>(value, ignoreCase: true, out var result) && Enum.IsDefined(result) && !int.TryParse(value, out _)
            ? result
            : throw new OptionException(option, $"Option {option} has the value '{value}'; expected {expected}.");

    private static int ParseInt(string option, string value, int minimum) =>
        int.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var result) && result >= minimum
            ? result
            : throw new OptionException(option, $"Option {option} has the value '{value}'; expected a whole number of at least {minimum}.");

    private static int ParseMilliseconds(string option, string value)
    {
        var number = value.EndsWith("ms", StringComparison.OrdinalIgnoreCase) ? value[..^2] : value;
        return int.TryParse(number, NumberStyles.None, CultureInfo.InvariantCulture, out var result)
            ? result
            : throw new OptionException(option, $"Option {option} has the value '{value}'; expected a whole number of milliseconds from 0 to {int.MaxValue}, e.g. 20ms.");
    }

    private static double ParseScale(string option, string value) =>
        double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out var result) && result > 0 && result <= 1000
            ? result
            : throw new OptionException(option, $"Option {option} has the value '{value}'; expected a number greater than 0 and at most 1000.");

    private static string ParsePath(string option, string value) =>
        !string.IsNullOrWhiteSpace(value)
            ? value
            : throw new OptionException(option, $"Option {option} needs a path.");
}
