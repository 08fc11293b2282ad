using LeaseSimulation.Settings;

namespace LeaseSimulation.Cli;

/// <summary>
/// Plans the default run, the one a bare <c>dotnet run</c> gets: the seed's table on one thread and virtual time for
/// every strategy, then a short real-clock demonstration on one thread, the thread pool and the starved pool. The
/// whole matrix is behind <c>--full</c> (<see cref="MatrixPlanner"/>).
/// </summary>
/// <remarks>
/// The demonstration's figures must not depend on the machine's load. Its CPU operations block by sleeping, as the
/// seed's do (<see cref="CpuMode.Sleep"/>): a slice then holds its thread for its scaled time whatever the load, where
/// conserved work (<see cref="CpuMode.Work"/>) would stretch each 1000 ms slice by the load (3× at a load of 6 on two
/// cores, past the 3 s of slack). What remains is ordering, which is the point: the FIFO consumer's renewals wait
/// behind queued slices (on virtual time, with no noise at all, 1 s past the lease), so noise can only make it lose
/// more; the others' renewals wait at most one slice on one thread and about nothing on their reserved lease worker,
/// which leaves at least 1.9 s of the 3 s slack, 190 ms of wall time at <see cref="DemoTimeScale"/>.
/// </remarks>
public static class DefaultRunPlanner
{
    /// <summary>The demonstration's real-clock scale: 1 s of scenario time takes 100 ms (<c>--time-scale</c> overrides it).</summary>
    public const double DemoTimeScale = 0.1;

    /// <summary>The demonstration's message count.</summary>
    public const int DemoMessages = 10;

    /// <summary>The demonstration's CPU-then-IO iterations per message.</summary>
    public const int DemoLoops = 5;

    /// <summary>The demonstration's CPU operation, in ms of scenario time (the seed's 1000 ms row).</summary>
    public const int DemoCpuMs = 1000;

    /// <summary>How the demonstration's CPU operations hold their thread: the seed's blocking sleep (see the remarks).</summary>
    public const CpuMode DemoCpuMode = CpuMode.Sleep;

    /// <summary>The demonstration's contexts, in table order.</summary>
    public static readonly IReadOnlyList<ContextKind> DemoContexts = [ContextKind.SingleThread, ContextKind.ThreadPool, ContextKind.StarvedPool];

    /// <summary>The demonstration's strategies, in table order: the naive consumer and the two that keep their leases.</summary>
    public static readonly IReadOnlyList<string> DemoStrategies = ["fifo", "priority", "pump"];

    /// <summary>
    /// Gets whether <paramref name="options"/> ask for the default run: no <c>--full</c>, no <c>--sweep</c> and no
    /// option that chooses what runs. The default run takes only <c>--time-scale</c> (for its demonstration) and the
    /// output options (<c>--json</c>, <c>--report</c>, <c>--monitor</c>, <c>--no-progress</c>); any other option runs
    /// the matrix narrowed by it, as before the default run existed.
    /// </summary>
    /// <param name="options">The parsed options.</param>
    /// <returns>Whether to run <see cref="Plan"/>.</returns>
    public static bool AppliesTo(CommandLineOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        return !options.Full && !options.Sweep
            && options is
            {
                Contexts: null, Strategies: null, Clock: null, Broker: null, Connection: null, BrokerLatencyMs: null,
                Messages: null, Loops: null, CpuMs: null, IoMs: null, ReceiveMs: null, RenewMs: null, LeaseMs: null,
                CpuMode: null, Threads: null, Seed: null,
            };
    }

    /// <summary>Plans the default run.</summary>
    /// <param name="options">The parsed options; only <see cref="CommandLineOptions.TimeScale"/> is used.</param>
    /// <returns>The virtual-time rows and the demonstration's rows.</returns>
    /// <exception cref="OptionException">The time scale is out of range.</exception>
    public static DefaultRunPlan Plan(CommandLineOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var virtualTime = MatrixPlanner.Plan(new CommandLineOptions { Contexts = [ContextKind.SingleThread], Clock = ClockKind.Virtual });
        var demonstration = new List<DemoRun>();
        foreach (var context in DemoContexts)
        {
            var rows = MatrixPlanner.Plan(new CommandLineOptions
            {
                Contexts = [context],
                Strategies = DemoStrategies,
                Clock = ClockKind.Real,
                TimeScale = options.TimeScale ?? DemoTimeScale,
                Messages = DemoMessages,
                Loops = DemoLoops,
                CpuMs = DemoCpuMs,
                CpuMode = DemoCpuMode,
            });
            foreach (var run in rows)
            {
                var (expected, reason) = Expect(context, run.Strategy.Name);
                demonstration.Add(new DemoRun(run, expected, reason));
            }
        }

        return new DefaultRunPlan(virtualTime, demonstration);
    }

    /// <summary>What a demonstration row must show, and why.</summary>
    /// <param name="context">The row's context.</param>
    /// <param name="strategy">The row's strategy name.</param>
    /// <returns>The expected outcome and its reason.</returns>
    public static (ExpectedOutcome Expected, string Reason) Expect(ContextKind context, string strategy)
    {
        ArgumentNullException.ThrowIfNull(strategy);
        return (context, strategy) switch
        {
            (ContextKind.SingleThread, "fifo") => (ExpectedOutcome.LosesLeases, "one FIFO queue: a renewal waits behind every CPU slice queued before it"),
            (ContextKind.ThreadPool, "fifo") => (ExpectedOutcome.LosesNone, "the pool hides it: each message sleeps on a thread of its own, renewals find a free one"),
            (ContextKind.StarvedPool, "fifo") => (ExpectedOutcome.LosesLeases, "every renewal waits behind the pool's blocking work items"),
            (ContextKind.Hosted, "fifo") => (ExpectedOutcome.LosesLeases, "the host's one FIFO queue: a renewal waits behind every CPU slice queued before it"),
            (ContextKind.Hosted, _) => (ExpectedOutcome.LosesNone, "lanes hosted on the same thread: a renewal waits for at most the one CPU slice running"),
            (ContextKind.SingleThread, _) => (ExpectedOutcome.LosesNone, "a renewal waits for at most the one CPU slice running"),
            _ => (ExpectedOutcome.LosesNone, "renewals run on the scheduler's reserved lease worker, not on the pool"),
        };
    }
}
