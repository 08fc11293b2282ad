using System.CommandLine;
using LeaseSimulation.Arguments;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Cli;

/// <summary>
/// The simulation's options, declared once (System.CommandLine): the root command with its help, and the reading of a
/// parse result into <see cref="CommandLineOptions"/>. The options the WinForms sample shares come from
/// <see cref="ScenarioOptions"/>.
/// </summary>
internal sealed class SimulationOptions
{
    private readonly Option<string> _context = ContextOption();

    private readonly Option<string> _strategy = Described(ScenarioOptions.Strategy(acceptsAll: true, withServiceBus: true), "(default: all)");

    private readonly Option<ClockKind> _clock = Described(ScenarioOptions.Clock(), "(default: virtual on single-thread, real elsewhere; virtual needs single-thread)");

    private readonly Option<BrokerKind> _broker = ScenarioOptions.Choice<BrokerKind>(
        "--broker",
        "memory|postgres|servicebus",
        "Who judges leases: the embedded in-memory broker (default), a PostgreSQL server, or Service Bus (an in-process test broker "
        + "unless --connection; runs fifo, pump, processor and processor-guide). Both need the real clock; e.g. --time-scale 0.1 for 500 ms locks.");

    private readonly Option<string> _connection = ScenarioOptions.Text(
        "--connection",
        "STRING",
        "The Npgsql connection string of --broker postgres (required), or the Service Bus connection string of --broker servicebus naming an existing empty queue with EntityPath (default: an in-process test broker).");

    private readonly Option<int> _brokerLatency = ScenarioOptions.Milliseconds(
        "--broker-latency",
        $"Latency of every receive, renew and settle call of the in-memory broker, in ms of scenario time: 20ms or 20 (default {MatrixPlanner.DefaultBrokerLatencyMs}ms). "
        + "Applies to the strategy that goes through that broker: pump. fifo, seed-yield and priority simulate their broker calls themselves (--receive-ms) and ignore it; so does postgres.");

    private readonly Option<double> _timeScale = Described(
        ScenarioOptions.TimeScale(),
        $"(default {new SimulationSettings().TimeScale} in the matrix, {DefaultRunPlanner.DemoTimeScale} in the default run's real-clock demonstration)");

    private readonly Option<int> _messages = Described(ScenarioOptions.Messages(), "(default 100, plus a 3x row for priority and pump)");

    private readonly Option<int> _loops = Described(ScenarioOptions.Loops(), $"(default {new SimulationSettings().Loops})");

    private readonly Option<int> _cpuMs = Described(ScenarioOptions.CpuMs(), "(default: both 100 and 1000)");

    private readonly Option<int> _ioMs = ScenarioOptions.WholeNumber("--io-ms", 0, "The IO operation, in ms of scenario time (default 1000).");

    private readonly Option<int> _receiveMs = ScenarioOptions.WholeNumber("--receive-ms", 0, "The receive time, in ms of scenario time (default 100).");

    private readonly Option<int> _renewMs = ScenarioOptions.WholeNumber("--renew-ms", 1, "The renew interval, in ms of scenario time (default 2000).");

    private readonly Option<int> _leaseMs = ScenarioOptions.WholeNumber("--lease-ms", 1, "The lease duration, in ms of scenario time (default 5000).");

    private readonly Option<CpuMode> _cpuMode = ScenarioOptions.Choice<CpuMode>(
        "--cpu-mode",
        "work|sleep|spin",
        "How a CPU operation holds its thread on the real clock (default work). "
        + "work: conserved CPU work, burn CPU until the thread's own CPU time (clock_gettime CLOCK_THREAD_CPUTIME_ID) has advanced by the scaled time, so a descheduled thread takes longer (spin where unsupported). "
        + "sleep: Thread.Sleep, the seed's blocking operation (no CPU used). "
        + "spin: burn CPU for the scaled wall time, however little CPU it got.");

    private readonly Option<int> _threads = ScenarioOptions.WholeNumber("--threads", 1, "Workers of the multi-thread priority scheduler (default: processor count, at least 4).");

    private readonly Option<int> _seed = ScenarioOptions.WholeNumber("--seed", int.MinValue, "Seed of the IO-time jitter (default 1).");

    private readonly Option<string> _json = ScenarioOptions.Text("--json", "PATH", "Write the results as JSON.");

    private readonly Option<string> _report = ScenarioOptions.Text("--report", "DIR", "Write a markdown report and an SVG chart.");

    private readonly Option<bool> _monitor = ScenarioOptions.Flag("--monitor", "Print the monitor's counters every 3 s of scenario time.");

    private readonly Option<bool> _noProgress = ScenarioOptions.Flag("--no-progress", "No live progress display for real-time runs.");

    private readonly Option<bool> _sweep = ScenarioOptions.Flag(
        "--sweep",
        $"Run the strategies over CPU ms {string.Join(", ", SweepPlanner.CpuTimesMs)} on one thread (virtual time, --messages default 100) and print total / lower bound and lost per strategy; "
        + "with --report DIR also draw it (sweep-total-over-bound.svg, sweep-lost.svg).");

    private readonly Option<bool> _full = ScenarioOptions.Flag(
        "--full",
        "Run the whole matrix instead of the default run: every strategy in every context (single-thread and hosted on virtual time; thread-pool and starved-pool on the real clock, "
        + "conserved CPU work, --time-scale 0.04) at CPU 100 and 1000 ms, plus 3x rows for priority and pump; 7.5 to 11 minutes on 2 cores. "
        + "Any option that chooses runs (--context, --strategy, --cpu-ms, --messages, ...) also runs the matrix, narrowed by it.");

    /// <summary>Creates the root command with every option; its action is left to the caller.</summary>
    /// <returns>The command.</returns>
    public RootCommand CreateCommand()
    {
        var command = new RootCommand(
            "The lost-lease simulation of seed 001: runs consumer strategies in each context and prints the results.\n\n"
            + "With no option that chooses runs (only --time-scale, --json, --report, --monitor, --no-progress), the default run, 35 to 50 s on 2 cores: "
            + "the seed's table (100 messages of 20 x (100 or 1000 ms CPU, 1 s awaited IO), a 5 s lease renewed every 2 s, plus 300-message rows) "
            + "on one thread and virtual time for every strategy (under a second), then a real-clock demonstration at --time-scale "
            + $"{DefaultRunPlanner.DemoTimeScale} ({DefaultRunPlanner.DemoMessages} messages of {DefaultRunPlanner.DemoLoops} x ({DefaultRunPlanner.DemoCpuMs} ms CPU as the seed's blocking sleep, 1 s IO)) "
            + "on one thread, the thread pool and the starved pool: fifo loses leases on one thread and on the starved pool, priority and pump lose none.\n"
            + "--full runs the whole matrix instead, 7.5 to 11 minutes on 2 cores (the longer when the machine is busy); so does any option that chooses runs, narrowing it.");
        Option[] options =
        [
            _context, _strategy, _clock, _broker, _connection, _brokerLatency, _timeScale, _messages, _loops, _cpuMs, _ioMs,
            _receiveMs, _renewMs, _leaseMs, _cpuMode, _threads, _seed, _json, _report, _monitor, _noProgress, _sweep, _full,
        ];
        foreach (var option in options)
        {
            command.Options.Add(option);
        }

        return command;
    }

    /// <summary>Reads a parse result without errors.</summary>
    /// <param name="parseResult">The parse result.</param>
    /// <returns>The options; <see langword="null"/> where an option was not given.</returns>
    public CommandLineOptions Read(ParseResult parseResult)
    {
        var strategy = ScenarioOptions.TextIfGiven(parseResult, _strategy);
        var contextText = ScenarioOptions.TextIfGiven(parseResult, _context);
        return new CommandLineOptions
        {
            Contexts = contextText switch
            {
                null => null,
                "all" => Enum.GetValues<ContextKind>(),
                _ => SettingNames.TryParseContext(contextText, out var context) ? [context] : null,
            },
            Strategies = strategy switch
            {
                null => null,
                "all" => [.. StrategyCatalog.All.Select(s => s.Name)],
                _ => [strategy],
            },
            Clock = ScenarioOptions.ValueIfGiven(parseResult, _clock),
            Broker = ScenarioOptions.ValueIfGiven(parseResult, _broker),
            Connection = ScenarioOptions.TextIfGiven(parseResult, _connection),
            BrokerLatencyMs = ScenarioOptions.ValueIfGiven(parseResult, _brokerLatency),
            TimeScale = ScenarioOptions.ValueIfGiven(parseResult, _timeScale),
            Messages = ScenarioOptions.ValueIfGiven(parseResult, _messages),
            Loops = ScenarioOptions.ValueIfGiven(parseResult, _loops),
            CpuMs = ScenarioOptions.ValueIfGiven(parseResult, _cpuMs),
            IoMs = ScenarioOptions.ValueIfGiven(parseResult, _ioMs),
            ReceiveMs = ScenarioOptions.ValueIfGiven(parseResult, _receiveMs),
            RenewMs = ScenarioOptions.ValueIfGiven(parseResult, _renewMs),
            LeaseMs = ScenarioOptions.ValueIfGiven(parseResult, _leaseMs),
            CpuMode = ScenarioOptions.ValueIfGiven(parseResult, _cpuMode),
            Threads = ScenarioOptions.ValueIfGiven(parseResult, _threads),
            Seed = ScenarioOptions.ValueIfGiven(parseResult, _seed),
            JsonPath = ScenarioOptions.TextIfGiven(parseResult, _json),
            ReportDirectory = ScenarioOptions.TextIfGiven(parseResult, _report),
            Monitor = parseResult.GetValue(_monitor),
            NoProgress = parseResult.GetValue(_noProgress),
            Sweep = parseResult.GetValue(_sweep),
            Full = parseResult.GetValue(_full),
        };
    }

    private static Option<T> Described<T>(Option<T> option, string defaults)
    {
        option.Description = $"{option.Description?.TrimEnd('.')} {defaults}.";
        return option;
    }

    private static Option<string> ContextOption()
    {
        var names = Enum.GetValues<ContextKind>().Select(SettingNames.Of).ToArray();
        var option = new Option<string>("--context")
        {
            Description = "The context the consumer runs in (default: all).",
            HelpName = string.Join('|', names) + "|all",
        };
        option.CustomParser = result =>
        {
            if (ScenarioOptions.Value(result) is not { } value)
            {
                return null;
            }

            if (string.Equals(value, "all", StringComparison.OrdinalIgnoreCase))
            {
                return "all";
            }

            if (SettingNames.TryParseContext(value, out var context))
            {
                return SettingNames.Of(context);
            }

            result.AddError($"Option --context has the value '{value}'; expected {string.Join(", ", names)} or all.");
            return null;
        };
        option.Validators.Add(result =>
        {
            if (result.IdentifierTokenCount > 1)
            {
                result.AddError("Option --context is given twice.");
            }
        });
        return option;
    }
}
