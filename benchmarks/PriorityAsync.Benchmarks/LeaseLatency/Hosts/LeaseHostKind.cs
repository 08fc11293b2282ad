namespace PriorityAsync.Benchmarks.LeaseLatency.Hosts;

/// <summary>The schedulers the harness compares.</summary>
internal enum LeaseHostKind
{
    /// <summary>A <see cref="PriorityAsync.PriorityTaskScheduler"/> with 2 dedicated workers at the lowest priority and its reserved lease worker.</summary>
    PriorityTaskSchedulerLowPriorityWorkers,

    /// <summary>A <see cref="PriorityAsync.PriorityAsyncContext"/> on one dedicated thread.</summary>
    PriorityAsyncContext,

    /// <summary>A <see cref="PriorityAsync.PriorityTaskScheduler"/> with 2 dedicated workers and its default reserved lease worker.</summary>
    PriorityTaskScheduler,

    /// <summary>A <see cref="PriorityAsync.PriorityTaskScheduler"/> with 2 dedicated workers and no reserved worker.</summary>
    PriorityTaskSchedulerUnreserved,

    /// <summary>A plain FIFO single-thread context.</summary>
    FifoSingleThread,

    /// <summary>The .NET thread pool, untouched.</summary>
    ThreadPool,

    /// <summary>A <see cref="PriorityAsync.PriorityTaskScheduler"/> with 2 dedicated workers (and its reserved one) while the thread pool is starved.</summary>
    PriorityTaskSchedulerStarvedPool,

    /// <summary>The .NET thread pool while it is starved.</summary>
    ThreadPoolStarved,
}
