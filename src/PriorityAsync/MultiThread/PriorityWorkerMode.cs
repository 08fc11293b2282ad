namespace PriorityAsync;

/// <summary>Where the workers of a <see cref="PriorityTaskScheduler"/> run.</summary>
public enum PriorityWorkerMode
{
    /// <summary>
    /// Dedicated threads owned by the scheduler. Lease-lane work keeps running when the .NET thread pool is starved,
    /// at the cost of threads that exist for the scheduler's whole life.
    /// </summary>
    DedicatedThreads,

    /// <summary>
    /// Runners borrowed from the .NET thread pool, at most <see cref="PriorityTaskSchedulerOptions.WorkerCount"/> at a
    /// time. No thread of its own, but work waits like any other thread-pool item when the pool is starved.
    /// </summary>
    ThreadPool,
}
