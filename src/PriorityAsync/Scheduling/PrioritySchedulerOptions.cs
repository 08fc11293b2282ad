using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>Options shared by every <see cref="PriorityScheduler"/>: its lanes, clock, yield quantum and stall threshold.</summary>
public class PrioritySchedulerOptions
{
    /// <summary>The largest number of lanes one scheduler supports.</summary>
    internal const int MaxLaneCount = 32;

    /// <summary>
    /// Gets the default lane set: <c>Lease</c> (most urgent), <c>Processing</c>, <c>Receive</c> (runs only when nothing
    /// else is ready). None has a starvation bound.
    /// </summary>
    internal static IReadOnlyList<LaneOptions> DefaultLanes { get; } =
        [new LaneOptions("Lease"), new LaneOptions("Processing"), new LaneOptions("Receive")];

    /// <summary>
    /// Gets or sets the lanes, most urgent first. Defaults to <see cref="DefaultLanes"/>. Between 1 and
    /// <see cref="MaxLaneCount"/> lanes with unique names.
    /// </summary>
    public IList<LaneOptions> Lanes { get; set; } = [.. DefaultLanes];

    /// <summary>Gets or sets the scheduler's name, used in exception messages, thread names and metric tags.</summary>
    public string? Name { get; set; }

    /// <summary>
    /// Gets or sets the clock. <see langword="null"/> (the default) uses real time with a dedicated timer thread, so
    /// timers fire while the .NET thread pool is starved. A <see cref="VirtualTimeProvider"/> runs a
    /// <see cref="PriorityAsyncContext"/> on virtual time. Any other provider is used as it is for time and timers.
    /// </summary>
    public TimeProvider? TimeProvider { get; set; }

    /// <summary>
    /// Gets or sets the slice length after which <see cref="PriorityScheduler.ShouldYield"/> turns true even when no
    /// more urgent work is ready. <see langword="null"/> (the default) disables the quantum. Must be positive.
    /// </summary>
    public TimeSpan? YieldQuantum { get; set; }

    /// <summary>
    /// Gets or sets the slice length from which a slice counts as a stall: it raises
    /// <see cref="PriorityScheduler.StallDetected"/> and the <c>priorityasync.lane.stalls</c> counter.
    /// <see langword="null"/> (the default) disables stall detection. Must be positive.
    /// </summary>
    public TimeSpan? StallThreshold { get; set; }

    /// <summary>
    /// Gets or sets how long a graceful stop (<see cref="PriorityTaskScheduler.Complete"/>, disposal,
    /// <see cref="PriorityAsyncContextThread.JoinAsync"/>) waits for work started in the lanes — tasks of
    /// <see cref="Lane.Run(Func{Task})"/> and async void methods — to finish. Until then their continuations are
    /// still taken from any thread; after it, work that arrives is rejected (it runs on the thread pool and is counted
    /// in <see cref="PriorityScheduler.RejectedWorkCount"/>). It also bounds the final drain of a
    /// <see cref="PriorityAsyncContext"/>: for that long after its end (real time), what the context's own items post
    /// from its thread still runs there. Defaults to 30 seconds, like a .NET host's shutdown timeout; zero stops at
    /// once; <see cref="Timeout.InfiniteTimeSpan"/> waits as long as it takes. At most <see cref="MaxTimerDelay"/>.
    /// </summary>
    public TimeSpan ShutdownTimeout { get; set; } = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Gets the longest delay a .NET timer accepts (<see cref="uint.MaxValue"/> - 1 milliseconds, about 49.7 days): the
    /// upper bound of every time option of this library.
    /// </summary>
    public static TimeSpan MaxTimerDelay { get; } = TimeSpan.FromMilliseconds(uint.MaxValue - 1);

    /// <summary>Throws when an option breaks its rule; the exception names the option.</summary>
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole and has no parameter to name; ParamName names the offending option property, as documented, so a caller sees which option is wrong.")]
    internal virtual void Validate()
    {
        if (Lanes is null || Lanes.Count == 0)
        {
            throw new ArgumentException("PrioritySchedulerOptions.Lanes must contain at least one lane.", nameof(Lanes));
        }

        if (Lanes.Count > MaxLaneCount)
        {
            throw new ArgumentOutOfRangeException(nameof(Lanes), Lanes.Count, $"PrioritySchedulerOptions.Lanes may contain at most {MaxLaneCount} lanes.");
        }

        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach (var lane in Lanes)
        {
            if (lane is null)
            {
                throw new ArgumentException("PrioritySchedulerOptions.Lanes must not contain null.", nameof(Lanes));
            }

            if (!names.Add(lane.Name))
            {
                throw new ArgumentException($"PrioritySchedulerOptions.Lanes contains the lane name '{lane.Name}' twice; lane names must be unique.", nameof(Lanes));
            }
        }

        OptionRules.ThrowIfNotPositiveDelay(YieldQuantum, nameof(PrioritySchedulerOptions), nameof(YieldQuantum));
        OptionRules.ThrowIfNotPositiveDelay(StallThreshold, nameof(PrioritySchedulerOptions), nameof(StallThreshold));
        OptionRules.ThrowIfNotTimeout(ShutdownTimeout, nameof(PrioritySchedulerOptions), nameof(ShutdownTimeout));
    }
}
