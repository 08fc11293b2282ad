namespace PriorityAsync;

/// <summary>Options of a <see cref="PriorityTaskScheduler"/>: the shared options plus its workers.</summary>
public sealed class PriorityTaskSchedulerOptions : PrioritySchedulerOptions
{
    /// <summary>The largest <see cref="WorkerCount"/>: the .NET thread pool's own limit of worker threads.</summary>
    public const int MaxWorkerCount = 32767;

    /// <summary>
    /// Gets or sets how many items may run at once (the number of workers). Defaults to
    /// <see cref="Environment.ProcessorCount"/>; between 1 and <see cref="MaxWorkerCount"/>.
    /// </summary>
    public int WorkerCount { get; set; } = Environment.ProcessorCount;

    /// <summary>Gets or sets where the workers run. Defaults to <see cref="PriorityWorkerMode.DedicatedThreads"/>.</summary>
    public PriorityWorkerMode Mode { get; set; } = PriorityWorkerMode.DedicatedThreads;

    /// <inheritdoc />
    internal override void Validate()
    {
        base.Validate();
        if (WorkerCount is < 1 or > MaxWorkerCount)
        {
            throw new ArgumentOutOfRangeException(nameof(WorkerCount), WorkerCount, $"PriorityTaskSchedulerOptions.WorkerCount must be between 1 and {MaxWorkerCount}.");
        }

        if (!Enum.IsDefined(Mode))
        {
            throw new ArgumentOutOfRangeException(nameof(Mode), Mode, "PriorityTaskSchedulerOptions.Mode must be DedicatedThreads or ThreadPool.");
        }

        if (TimeProvider is VirtualTimeProvider)
        {
            throw new ArgumentException("PriorityTaskSchedulerOptions.TimeProvider cannot be a VirtualTimeProvider: virtual time needs the single thread of a PriorityAsyncContext to be deterministic.", nameof(TimeProvider));
        }
    }
}
