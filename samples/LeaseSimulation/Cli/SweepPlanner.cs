using LeaseSimulation.Running;
using LeaseSimulation.Settings;

namespace LeaseSimulation.Cli;

/// <summary>
/// Plans <c>--sweep</c>: the strategies over <see cref="CpuTimesMs"/> on one thread and virtual time (deterministic,
/// fast), with the other options as given (100 messages unless <c>--messages</c>).
/// </summary>
public static class SweepPlanner
{
    /// <summary>The CPU times of the sweep, in ms, each followed by the IO time (1000 ms by default).</summary>
    public static readonly IReadOnlyList<int> CpuTimesMs = [10, 50, 100, 300, 1000, 3000];

    /// <summary>Plans the sweep.</summary>
    /// <param name="options">The parsed options, with <see cref="CommandLineOptions.Sweep"/> set.</param>
    /// <returns>The runs, CPU time by CPU time.</returns>
    /// <exception cref="OptionException">An option that the sweep sets itself, or a setting out of range.</exception>
    public static IReadOnlyList<PlannedRun> Plan(CommandLineOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        if (options.Full)
        {
            throw new OptionException("--full", "Option --full cannot be combined with --sweep: --full runs the matrix, --sweep the CPU sweep.");
        }

        if (options.CpuMs is not null)
        {
            throw new OptionException("--cpu-ms", $"Option --cpu-ms cannot be combined with --sweep, which runs CPU ms {string.Join(", ", CpuTimesMs)}.");
        }

        if (options.Contexts is not null && options.Contexts.Any(c => c != ContextKind.SingleThread))
        {
            throw new OptionException("--context", "Option --context must be single-thread with --sweep (the sweep runs on one thread and virtual time).");
        }

        if (options.Clock == ClockKind.Real)
        {
            throw new OptionException("--clock", "Option --clock must be virtual with --sweep (the sweep runs on one thread and virtual time).");
        }

        if (options.Broker is { } broker && broker != BrokerKind.Memory)
        {
            throw new OptionException("--broker", "Option --broker must be memory with --sweep (the sweep runs on virtual time; PostgreSQL and Service Bus judge leases on their own clocks).");
        }

        var single = options with { Contexts = [ContextKind.SingleThread], Clock = ClockKind.Virtual, Messages = options.Messages ?? 100 };
        return [.. CpuTimesMs.SelectMany(cpu => MatrixPlanner.Plan(single with { CpuMs = cpu }))];
    }
}
