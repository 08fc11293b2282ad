namespace PriorityAsync;

/// <summary>
/// Whether, and from where, a <see cref="PriorityScheduler"/> takes work; the states only move forward, and
/// <see cref="SchedulerLifetime"/> makes every move.
/// </summary>
internal enum AcceptanceState
{
    /// <summary>Work from any thread is accepted.</summary>
    Open,

    /// <summary>
    /// Shutting down gracefully: continuations, posts and timer firings are accepted from any thread (they belong
    /// to work in flight), new work (<see cref="Lane.Run(Func{Task})"/>) only from the scheduler's own threads.
    /// </summary>
    Draining,

    /// <summary>Nothing more is queued; the items already queued still run.</summary>
    Closing,

    /// <summary>Nothing is queued; the scheduler has finished.</summary>
    Closed,

    /// <summary>Nothing is queued; the scheduler was disposed.</summary>
    Disposed,
}
