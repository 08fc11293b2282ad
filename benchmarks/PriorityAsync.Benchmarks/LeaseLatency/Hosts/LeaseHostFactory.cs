namespace PriorityAsync.Benchmarks.LeaseLatency.Hosts;

/// <summary>Names and creates the <see cref="ILeaseHost"/> of each <see cref="LeaseHostKind"/>.</summary>
internal static class LeaseHostFactory
{
    /// <summary>The workers of the multi-thread scheduler (the machine's 2 cores).</summary>
    public const int SchedulerWorkers = 2;

    public static string Describe(LeaseHostKind kind) => kind switch
    {
        LeaseHostKind.PriorityAsyncContext => "PriorityAsyncContext (1 thread)",
        LeaseHostKind.PriorityTaskScheduler => $"PriorityTaskScheduler ({SchedulerWorkers} workers + 1 reserved)",
        LeaseHostKind.PriorityTaskSchedulerUnreserved => $"PriorityTaskScheduler ({SchedulerWorkers} workers, none reserved)",
        LeaseHostKind.PriorityTaskSchedulerLowPriorityWorkers => $"PriorityTaskScheduler ({SchedulerWorkers} workers at Lowest + 1 reserved)",
        LeaseHostKind.FifoSingleThread => "FIFO single thread",
        LeaseHostKind.ThreadPool => "ThreadPool",
        LeaseHostKind.PriorityTaskSchedulerStarvedPool => $"PriorityTaskScheduler ({SchedulerWorkers} workers + 1 reserved), pool starved",
        LeaseHostKind.ThreadPoolStarved => "ThreadPool, starved",
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, null),
    };

    public static bool IsPriorityAsync(LeaseHostKind kind) =>
        kind is LeaseHostKind.PriorityAsyncContext or LeaseHostKind.PriorityTaskScheduler or LeaseHostKind.PriorityTaskSchedulerUnreserved
            or LeaseHostKind.PriorityTaskSchedulerStarvedPool or LeaseHostKind.PriorityTaskSchedulerLowPriorityWorkers;

    /// <summary>Gets whether the host keeps a reserved worker for the lease lane.</summary>
    public static bool IsReserved(LeaseHostKind kind) =>
        kind is LeaseHostKind.PriorityTaskScheduler or LeaseHostKind.PriorityTaskSchedulerStarvedPool or LeaseHostKind.PriorityTaskSchedulerLowPriorityWorkers;

    public static bool StarvesThreadPool(LeaseHostKind kind) =>
        kind is LeaseHostKind.PriorityTaskSchedulerStarvedPool or LeaseHostKind.ThreadPoolStarved;

    public static ILeaseHost Create(LeaseHostKind kind) => kind switch
    {
        LeaseHostKind.PriorityAsyncContext => new ContextThreadLeaseHost(),
        LeaseHostKind.PriorityTaskScheduler or LeaseHostKind.PriorityTaskSchedulerStarvedPool => new TaskSchedulerLeaseHost(SchedulerWorkers, reservedWorkers: 1),
        LeaseHostKind.PriorityTaskSchedulerUnreserved => new TaskSchedulerLeaseHost(SchedulerWorkers, reservedWorkers: 0),
        LeaseHostKind.PriorityTaskSchedulerLowPriorityWorkers => new TaskSchedulerLeaseHost(SchedulerWorkers, reservedWorkers: 1, ThreadPriority.Lowest),
        LeaseHostKind.FifoSingleThread => new FifoLeaseHost(),
        LeaseHostKind.ThreadPool or LeaseHostKind.ThreadPoolStarved => new ThreadPoolLeaseHost(),
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, null),
    };
}
