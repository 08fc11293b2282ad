using LeaseSimulation.Settings;

namespace LeaseSimulation.Cli;

/// <summary>
/// What the command line asked for; <see langword="null"/> means "not given, use the default". With none of the
/// options that choose runs, the command runs the default run (<see cref="DefaultRunPlanner"/>); otherwise the matrix
/// (<see cref="MatrixPlanner"/>) narrowed by them.
/// </summary>
public sealed record CommandLineOptions
{
    /// <summary>Gets the contexts to run (every one for <c>--context all</c>), or <see langword="null"/> when not given (all).</summary>
    public IReadOnlyList<ContextKind>? Contexts { get; init; }

    /// <summary>Gets the strategy names to run (every one for <c>--strategy all</c>), or <see langword="null"/> when not given (all).</summary>
    public IReadOnlyList<string>? Strategies { get; init; }

    /// <summary>Gets the clock, or <see langword="null"/> for virtual on one thread and real elsewhere.</summary>
    public ClockKind? Clock { get; init; }

    /// <summary>Gets the broker, or <see langword="null"/> for the embedded in-memory one.</summary>
    public BrokerKind? Broker { get; init; }

    /// <summary>Gets the connection string of <c>--broker postgres</c>.</summary>
    public string? Connection { get; init; }

    /// <summary>
    /// Gets the in-memory broker's latency per receive, renew and settle call in ms, or <see langword="null"/> for
    /// <see cref="MatrixPlanner.DefaultBrokerLatencyMs"/>.
    /// </summary>
    public int? BrokerLatencyMs { get; init; }

    /// <summary>Gets the real-clock time scale.</summary>
    public double? TimeScale { get; init; }

    /// <summary>Gets the message count, or <see langword="null"/> for the seed's 100 (plus a 3× row in the default matrix).</summary>
    public int? Messages { get; init; }

    /// <summary>Gets the loop count.</summary>
    public int? Loops { get; init; }

    /// <summary>Gets the CPU time in ms, or <see langword="null"/> for both of the seed's (100 and 1000).</summary>
    public int? CpuMs { get; init; }

    /// <summary>Gets the IO time in ms.</summary>
    public int? IoMs { get; init; }

    /// <summary>Gets the receive time in ms.</summary>
    public int? ReceiveMs { get; init; }

    /// <summary>Gets the renew interval in ms.</summary>
    public int? RenewMs { get; init; }

    /// <summary>Gets the lease duration in ms.</summary>
    public int? LeaseMs { get; init; }

    /// <summary>Gets the CPU mode.</summary>
    public CpuMode? CpuMode { get; init; }

    /// <summary>Gets the worker count of the multi-thread priority scheduler.</summary>
    public int? Threads { get; init; }

    /// <summary>Gets the jitter seed.</summary>
    public int? Seed { get; init; }

    /// <summary>Gets the path of the JSON results file.</summary>
    public string? JsonPath { get; init; }

    /// <summary>Gets the directory of the markdown report and chart.</summary>
    public string? ReportDirectory { get; init; }

    /// <summary>Gets whether to print the monitor's lines (every 3 s of scenario time), as the seed does.</summary>
    public bool Monitor { get; init; }

    /// <summary>Gets whether to skip the live progress display of real-time runs.</summary>
    public bool NoProgress { get; init; }

    /// <summary>Gets whether to run the CPU sweep (<see cref="SweepPlanner"/>) instead of the matrix.</summary>
    public bool Sweep { get; init; }

    /// <summary>Gets whether <c>--full</c> asked for the whole matrix (<see cref="MatrixPlanner"/>) instead of the default run.</summary>
    public bool Full { get; init; }
}
