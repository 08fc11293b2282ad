using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>Options of a <see cref="PriorityTaskScheduler"/>: the shared options plus its workers.</summary>
public sealed class PriorityTaskSchedulerOptions : PrioritySchedulerOptions
{
    /// <summary>The largest <see cref="WorkerCount"/>: the .NET thread pool's own limit of worker threads.</summary>
    internal const int MaxWorkerCount = 32767;

    /// <summary>
    /// Gets or sets how many items may run at once (the number of workers). Defaults to
    /// <see cref="Environment.ProcessorCount"/>; between 1 and <see cref="MaxWorkerCount"/>.
    /// </summary>
    public int WorkerCount { get; set; } = Environment.ProcessorCount;

    /// <summary>Gets or sets where the workers run. Defaults to <see cref="PriorityWorkerMode.DedicatedThreads"/>.</summary>
    public PriorityWorkerMode Mode { get; set; } = PriorityWorkerMode.DedicatedThreads;

    /// <summary>
    /// Gets or sets how many workers are reserved for <see cref="ReservedLane"/> and the lanes more urgent than it.
    /// Reserved workers are dedicated threads (in both modes) added to the <see cref="WorkerCount"/> workers; they run
    /// nothing else, so a lease renewal never waits behind processing slices that hold every other worker, blocking or
    /// not. Idle, they sleep and cost nothing. Defaults to 1; 0 turns reservation off; at most
    /// <see cref="MaxWorkerCount"/>.
    /// </summary>
    public int ReservedWorkerCount { get; set; } = 1;

    /// <summary>
    /// Gets or sets the least urgent lane the reserved workers run (they run it and every more urgent lane). Defaults
    /// to <see cref="LanePriority.Lease"/>, the most urgent lane; must be a lane of <see cref="PrioritySchedulerOptions.Lanes"/>.
    /// </summary>
    public LanePriority ReservedLane { get; set; } = LanePriority.Lease;

    /// <summary>
    /// Gets or sets the scheduling priority of the ordinary (not reserved) workers: <see cref="ThreadPriority.Normal"/>
    /// (the default), <see cref="ThreadPriority.BelowNormal"/> or <see cref="ThreadPriority.Lowest"/>. Lower, the
    /// operating system runs a reserved worker (and the timer thread) ahead of ordinary workers that spin on every
    /// core, so a lease renewal waits less for a core under CPU-bound slices; the cost is that other processes of the
    /// machine win over the ordinary workers too. Windows applies it as the thread priority, which is strict there.
    /// Linux: <see cref="ThreadPriority.BelowNormal"/> adds 5 to the thread's nice value (a smaller share of a busy
    /// core, no preemption on wake-up); <see cref="ThreadPriority.Lowest"/> moves the thread to <c>SCHED_IDLE</c>, the
    /// strict counterpart: any ordinary thread that wakes, the reserved worker included, preempts it at once, and it
    /// runs only on cores no ordinary thread of the machine wants (so a machine busy with other work starves it). Only
    /// with <see cref="PriorityWorkerMode.DedicatedThreads"/>: thread-pool threads are shared.
    /// </summary>
    public ThreadPriority OrdinaryWorkerPriority { get; set; } = ThreadPriority.Normal;

    /// <inheritdoc />
    [SuppressMessage("Usage", "MA0015:Specify the parameter name in ArgumentException", Justification = "Validate checks the options object as a whole and has no parameter to name; ParamName names the offending option property, as documented, so a caller sees which option is wrong.")]
    internal override void Validate()
    {
        base.Validate();
        OptionRules.ThrowIfOutOfRange(WorkerCount, 1, MaxWorkerCount, nameof(PriorityTaskSchedulerOptions), nameof(WorkerCount));
        OptionRules.ThrowIfOutOfRange(ReservedWorkerCount, 0, MaxWorkerCount, nameof(PriorityTaskSchedulerOptions), nameof(ReservedWorkerCount));

        if (ReservedLane.Rank >= Lanes.Count)
        {
            throw new ArgumentOutOfRangeException(nameof(ReservedLane), ReservedLane, $"PriorityTaskSchedulerOptions.ReservedLane must be one of the {Lanes.Count} lane(s) of Lanes.");
        }

        if (!Enum.IsDefined(Mode))
        {
            throw new ArgumentOutOfRangeException(nameof(Mode), Mode, "PriorityTaskSchedulerOptions.Mode must be DedicatedThreads or ThreadPool.");
        }

        if (OrdinaryWorkerPriority is not (ThreadPriority.Normal or ThreadPriority.BelowNormal or ThreadPriority.Lowest))
        {
            throw new ArgumentOutOfRangeException(nameof(OrdinaryWorkerPriority), OrdinaryWorkerPriority, "PriorityTaskSchedulerOptions.OrdinaryWorkerPriority must be Normal, BelowNormal or Lowest.");
        }

        if (OrdinaryWorkerPriority != ThreadPriority.Normal && Mode == PriorityWorkerMode.ThreadPool)
        {
            throw new ArgumentException("PriorityTaskSchedulerOptions.OrdinaryWorkerPriority can be lowered only with Mode = DedicatedThreads: thread-pool threads are shared with the rest of the process.", nameof(OrdinaryWorkerPriority));
        }

        if (TimeProvider is VirtualTimeProvider)
        {
            throw new ArgumentException("PriorityTaskSchedulerOptions.TimeProvider cannot be a VirtualTimeProvider: virtual time needs the single thread of a PriorityAsyncContext to be deterministic.", nameof(TimeProvider));
        }
    }
}
