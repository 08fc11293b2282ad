namespace PriorityAsync.Reliability.Tests.Core;

/// <summary>The schedulers the core scenarios run on.</summary>
public enum SchedulerKind
{
    /// <summary>A <see cref="PriorityAsyncContextThread"/>: one thread.</summary>
    ContextThread,

    /// <summary>A <see cref="PriorityTaskScheduler"/> with 2 dedicated workers and its reserved lease worker.</summary>
    Dedicated,

    /// <summary>A <see cref="PriorityTaskScheduler"/> with at most 2 thread-pool runners and its reserved lease worker.</summary>
    ThreadPool,
}
