namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>
    /// Gets or sets whether and from where the scheduler accepts work. Change it under <see cref="Gate"/>; the setter
    /// is a full fence, so an enqueue that has not yet announced itself sees the new state.
    /// </summary>
    private protected AcceptanceState Acceptance
    {
        get => _acceptance;
        set
        {
            _acceptance = value;
            Interlocked.MemoryBarrier();
        }
    }

    /// <summary>Gets whether the scheduler has finished (closed or disposed): no worker runs its lanes any more.</summary>
    private protected bool HasFinished => _acceptance >= AcceptanceState.Closed;

    /// <summary>
    /// Gets whether, while the scheduler is <see cref="AcceptanceState.Closing"/>, work that its own threads queue is
    /// still taken (and run before the scheduler finishes): a <see cref="PriorityAsyncContext"/> during its final
    /// drain. Work from other threads is rejected either way.
    /// </summary>
    private protected virtual bool TakesOwnWorkWhileClosing => false;

    /// <summary>Gets whether continuations, posts and timer firings are queued (rather than rejected).</summary>
    private bool AcceptsQueuedWork => _acceptance <= AcceptanceState.Draining;

    /// <summary>Gets whether the calling thread may still queue work although the scheduler is closing.</summary>
    private bool AcceptsOwnWorkWhileClosing =>
        _acceptance == AcceptanceState.Closing && TakesOwnWorkWhileClosing && IsWorkerThread;

    /// <summary>
    /// Throws when the scheduler takes no new work from the calling thread: <see cref="ObjectDisposedException"/>
    /// after disposal, <see cref="InvalidOperationException"/> once it has finished, or while it shuts down and the
    /// caller is not one of its own threads.
    /// </summary>
    internal void ThrowIfNotAcceptingNewWork()
    {
        switch (_acceptance)
        {
            case AcceptanceState.Open:
                return;
            case AcceptanceState.Draining when IsWorkerThread:
                return;
            case AcceptanceState.Closing when TakesOwnWorkWhileClosing && IsWorkerThread:
                return;
            case AcceptanceState.Disposed:
                throw new ObjectDisposedException(ToString(), $"{this} has been disposed and accepts no new work.");
            case AcceptanceState.Draining:
            case AcceptanceState.Closing:
                throw new InvalidOperationException($"{this} is shutting down and accepts new work only from its own threads.");
            default:
                throw new InvalidOperationException($"{this} has finished running and accepts no new work.");
        }
    }
}
