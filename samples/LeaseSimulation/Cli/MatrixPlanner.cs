using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace LeaseSimulation.Cli;

/// <summary>Turns the command line into the list of runs: the seed's matrix, narrowed by the options given.</summary>
public static class MatrixPlanner
{
    /// <summary>The seed's CPU times, both run when <c>--cpu-ms</c> is not given.</summary>
    public static readonly IReadOnlyList<int> SeedCpuTimesMs = [100, 1000];

    /// <summary>
    /// The strategies that also get a 3× message-count row when <c>--messages</c> is not given (they must not lose at
    /// scale): at every CPU time on virtual time, at 100 ms only on the real clock unless <c>--cpu-ms</c> is given.
    /// </summary>
    public static readonly IReadOnlyList<string> ScaleCheckStrategies = ["priority", "pump"];

    /// <summary>
    /// The in-memory broker's latency per receive, renew and settle call when <c>--broker-latency</c> is not given, in
    /// ms of scenario time: a broker a network hop away, not an instant one (it applies to the pump's rows).
    /// </summary>
    public const int DefaultBrokerLatencyMs = 20;

    /// <summary>The message-count multiplier of the scale rows.</summary>
    public const int ScaleFactor = 3;

    /// <summary>Plans the runs.</summary>
    /// <param name="options">The parsed options.</param>
    /// <returns>The runs, in table order.</returns>
    /// <exception cref="OptionException">The options combine badly or a value breaks a setting's rule.</exception>
    public static IReadOnlyList<PlannedRun> Plan(CommandLineOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var contexts = options.Contexts ?? Enum.GetValues<ContextKind>();
        var broker = options.Broker ?? BrokerKind.Memory;
        var named = options.Strategies?.Select(StrategyCatalog.Get).ToArray() ?? [.. StrategyCatalog.All];
        var strategies = named.Where(s => s.Supports(broker)).ToArray();
        if (strategies.Length == 0)
        {
            throw new OptionException("--strategy", broker == BrokerKind.ServiceBus
                ? $"Option --broker servicebus runs the strategies {string.Join(", ", StrategyCatalog.All.Where(s => s.Supports(broker)).Select(s => s.Name))}; --strategy {string.Join(", ", named.Select(s => s.Name))} cannot run on it."
                : $"Option --strategy {string.Join(", ", named.Select(s => s.Name))} needs --broker servicebus (it is the Azure SDK's ServiceBusProcessor).");
        }

        var cpuTimes = options.CpuMs is { } cpu ? [cpu] : SeedCpuTimesMs;
        if (broker == BrokerKind.Postgres && string.IsNullOrWhiteSpace(options.Connection))
        {
            throw new OptionException("--connection", "Option --broker postgres needs --connection with an Npgsql connection string.");
        }

        if (broker == BrokerKind.Postgres)
        {
            try
            {
                _ = new Npgsql.NpgsqlConnectionStringBuilder(options.Connection);
            }
            catch (Exception ex) when (ex is ArgumentException or FormatException or KeyNotFoundException or InvalidCastException)
            {
                throw new OptionException("--connection", $"Option --connection is not a valid Npgsql connection string: {ex.Message.Split('\n')[0]}");
            }
        }

        if (broker == BrokerKind.ServiceBus && options.Connection is { } serviceBusConnection)
        {
            ServiceBusConnectionCheck.ThrowIfInvalid(serviceBusConnection);
        }

        if (broker != BrokerKind.Memory && options.BrokerLatencyMs is not null)
        {
            throw new OptionException("--broker-latency", $"Option --broker-latency needs --broker memory (the {(broker == BrokerKind.Postgres ? "PostgreSQL" : "Service Bus")} broker has its own latency).");
        }

        if (broker == BrokerKind.Memory && options.Connection is not null)
        {
            throw new OptionException("--connection", "Option --connection needs --broker postgres or --broker servicebus.");
        }

        if (broker == BrokerKind.ServiceBus && options.Clock == ClockKind.Virtual)
        {
            throw new OptionException("--broker", "Option --broker servicebus needs the real clock: the broker judges locks on its own clock (drop --clock virtual; use --time-scale).");
        }

        if (broker == BrokerKind.Postgres && options.Clock == ClockKind.Virtual)
        {
            throw new OptionException("--broker", "Option --broker postgres needs the real clock: the server judges leases on its own clock (drop --clock virtual; use --time-scale).");
        }

        var plan = new List<PlannedRun>();
        foreach (var context in contexts)
        {
            var clock = options.Clock ?? (context.IsOneThread() && broker == BrokerKind.Memory ? ClockKind.Virtual : ClockKind.Real);
            if (clock == ClockKind.Virtual && !context.IsOneThread())
            {
                throw new OptionException("--clock", $"Option --clock virtual needs --context single-thread or hosted; {SettingNames.Of(context)} runs on several threads (use --clock real with --time-scale).");
            }

            foreach (var cpuMs in cpuTimes)
            {
                foreach (var strategy in strategies)
                {
                    plan.Add(new PlannedRun(Build(options, context, clock, cpuMs, options.Messages ?? 100), strategy));
                }
            }

            if (options.Messages is null && broker != BrokerKind.ServiceBus)
            {
                // 3x rows: on virtual time at every CPU time; on the real clock only where cheap (the 1000 ms ones take
                // 3000 s of scenario time on two workers; docs/simulation.md gives their command and numbers).
                foreach (var cpuMs in cpuTimes.Where(c => clock == ClockKind.Virtual || options.CpuMs is not null || c <= 100))
                {
                    foreach (var strategy in strategies.Where(s => ScaleCheckStrategies.Contains(s.Name)))
                    {
                        plan.Add(new PlannedRun(Build(options, context, clock, cpuMs, 100 * ScaleFactor), strategy));
                    }
                }
            }
        }

        return plan;
    }

    private static SimulationSettings Build(CommandLineOptions o, ContextKind context, ClockKind clock, int cpuMs, int messages)
    {
        var defaults = new SimulationSettings();
        var settings = new SimulationSettings
        {
            Context = context,
            Clock = clock,
            Broker = o.Broker ?? BrokerKind.Memory,
            BrokerConnection = o.Connection,
            BrokerLatency = (o.Broker ?? BrokerKind.Memory) == BrokerKind.Memory ? TimeSpan.FromMilliseconds(o.BrokerLatencyMs ?? DefaultBrokerLatencyMs) : TimeSpan.Zero,
            Messages = messages,
            CpuTime = TimeSpan.FromMilliseconds(cpuMs),
            TimeScale = o.TimeScale ?? defaults.TimeScale,
            Loops = o.Loops ?? defaults.Loops,
            IoTime = o.IoMs is { } io ? TimeSpan.FromMilliseconds(io) : defaults.IoTime,
            ReceiveTime = o.ReceiveMs is { } receive ? TimeSpan.FromMilliseconds(receive) : defaults.ReceiveTime,
            RenewInterval = o.RenewMs is { } renew ? TimeSpan.FromMilliseconds(renew) : defaults.RenewInterval,
            LeaseDuration = o.LeaseMs is { } lease ? TimeSpan.FromMilliseconds(lease) : defaults.LeaseDuration,
            CpuMode = o.CpuMode ?? defaults.CpuMode,
            Threads = o.Threads ?? defaults.Threads,
            Seed = o.Seed ?? defaults.Seed,
        };

        try
        {
            settings.Validate();
        }
        catch (ArgumentException ex)
        {
            var option = OptionOf(ex.ParamName);
            throw new OptionException(option, $"Option {option}: {ex.Message.Split(" (Parameter", 2)[0]}");
        }

        return settings;
    }

    private static string OptionOf(string? setting) => setting switch
    {
        nameof(SimulationSettings.Messages) => "--messages",
        nameof(SimulationSettings.Loops) => "--loops",
        nameof(SimulationSettings.CpuTime) => "--cpu-ms",
        nameof(SimulationSettings.IoTime) => "--io-ms",
        nameof(SimulationSettings.ReceiveTime) => "--receive-ms",
        nameof(SimulationSettings.RenewInterval) => "--renew-ms",
        nameof(SimulationSettings.LeaseDuration) => "--lease-ms",
        nameof(SimulationSettings.Threads) => "--threads",
        nameof(SimulationSettings.TimeScale) => "--time-scale",
        nameof(SimulationSettings.Clock) => "--clock",
        nameof(SimulationSettings.CpuMode) => "--cpu-mode",
        nameof(SimulationSettings.Broker) => "--broker",
        nameof(SimulationSettings.BrokerConnection) => "--connection",
        nameof(SimulationSettings.BrokerLatency) => "--broker-latency",
        _ => "--" + (setting ?? "options").ToLowerInvariant(),
    };
}
