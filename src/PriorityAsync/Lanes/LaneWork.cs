namespace PriorityAsync;

/// <summary>
/// A piece of work counted as outstanding by its scheduler (<see cref="Lane.TrackWork"/>) until disposed: a graceful stop
/// waits for it. Disposing it more than once, from any thread, ends the count once.
/// </summary>
public sealed class LaneWork : IDisposable
{
    private PriorityScheduler? _scheduler;

    internal LaneWork(PriorityScheduler scheduler) => _scheduler = scheduler;

    /// <summary>Gets whether the work has ended (<see cref="Dispose"/> has been called).</summary>
    public bool IsEnded => Volatile.Read(ref _scheduler) is null;

    /// <summary>Ends the work: the scheduler no longer waits for it. Only the first call counts.</summary>
    public void Dispose() => Interlocked.Exchange(ref _scheduler, null)?.RunCompleted();
}
