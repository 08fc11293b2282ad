using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    /// <summary>
    /// Stops the scheduler gracefully. New work (<see cref="Lane.Run(Func{Task})"/>) is taken only from the scheduler's
    /// own threads; continuations, posts and timer firings of work in flight are still taken from any thread until
    /// every lane run and async void operation has finished, or <see cref="PriorityScheduler.ShutdownTimeout"/> has
    /// passed. Then the items already queued run, the workers stop and <see cref="Completion"/> completes; work that
    /// arrives later is rejected (see <see cref="PriorityScheduler.RejectedWork"/>). Returns at once; safe to call from
    /// any thread, more than once.
    /// </summary>
    public void Complete()
    {
        lock (Gate)
        {
            if (Acceptance != AcceptanceState.Open)
            {
                return;
            }

            Acceptance = AcceptanceState.Draining;
        }

        SynchronousContinuation.Attach(WhenDrainedAsync(), static (_, s) => ((PriorityTaskScheduler)s!).OnDrained(), this);
    }

    /// <summary>
    /// Completes the scheduler (see <see cref="Complete"/>) and, unless called from one of its own workers, waits until
    /// it has stopped. Never throws the work's exceptions (see <see cref="Completion"/>). Called from inside a lane it
    /// only signals, so it never deadlocks.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD002:Avoid problematic synchronous waits", Justification = "A synchronous Dispose that waits for the workers is the documented contract (like Thread.Join). Called from one of the scheduler's own workers (inside a lane) it only signals and does not wait, so the scheduler never waits for itself.")]
    public void Dispose()
    {
        RequestDispose();
        if (!IsWorkerThread)
        {
            Completion.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing).GetAwaiter().GetResult();
        }
    }

    /// <summary>
    /// Completes the scheduler (see <see cref="Complete"/>) and waits asynchronously until it has stopped. Called from
    /// inside a lane it only signals and returns at once (the caller's own work is part of what the stop waits for).
    /// </summary>
    /// <returns>A task that completes when the scheduler has stopped, or at once from inside a lane.</returns>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "Awaits Completion, the task of this type's own TaskCompletionSource; see Completion.")]
    public async ValueTask DisposeAsync()
    {
        RequestDispose();
        if (!IsWorkerThread)
        {
            await Completion.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }

    private void RequestDispose()
    {
        lock (Gate)
        {
            _disposeRequested = true;
            if (_finished)
            {
                Acceptance = AcceptanceState.Disposed;
            }
        }

        Complete();
    }
}
