using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>
/// A <see cref="PriorityAsyncContext"/> running on a dedicated thread it owns, for code that needs a single-thread
/// priority scheduler without giving it the calling thread (a service, a test, a UI-less host).
/// </summary>
/// <remarks>
/// Queue work through <see cref="Context"/>'s lanes (<c>thread.Context.GetLane(lane).Run(work)</c>). The
/// thread runs until <see cref="JoinAsync"/> or disposal; then it waits for the work started with
/// <see cref="Lane.Run(Func{Task})"/> to finish (up to <see cref="PrioritySchedulerOptions.ShutdownTimeout"/>),
/// runs the items still queued and exits. Stopping needs no thread-pool thread. A posted callback that throws ends the
/// thread after the items already queued have run, and faults <see cref="Completion"/>.
/// </remarks>
public sealed class PriorityAsyncContextThread : IDisposable, IAsyncDisposable
{
    // Continuations run inline: completing it only posts the entry's continuation to the context, so stopping needs no
    // thread-pool thread (disposal must work on a starved pool).
    private readonly TaskCompletionSource _stopRequested = new();
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly Thread _thread;

    /// <summary>Creates the context and starts its thread.</summary>
    /// <param name="options">The context's options; <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentException">An option breaks its rule; the exception names it.</exception>
    public PriorityAsyncContextThread(PrioritySchedulerOptions? options = null)
    {
        Context = new PriorityAsyncContext(options);
        _thread = new Thread(Main)
        {
            IsBackground = true,
            Name = Context.Name,
        };
        _thread.Start();
    }

    /// <summary>Gets the context that runs on the thread.</summary>
    public PriorityAsyncContext Context { get; }

    /// <summary>Gets a task that completes when the thread has exited; it is faulted when the context's run threw.</summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of the type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the type itself; no JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    public Task Completion => _completion.Task;

    /// <summary>Runs <paramref name="work"/> in the lane <paramref name="lane"/> on the context's thread.</summary>
    /// <param name="lane">The lane.</param>
    /// <param name="work">The asynchronous work.</param>
    /// <returns>A task that completes with the work.</returns>
    /// <exception cref="ObjectDisposedException">The thread has been disposed.</exception>
    /// <exception cref="InvalidOperationException">The thread has been asked to stop.</exception>
    internal Task RunAsync(LanePriority lane, Func<Task> work)
    {
        var target = Context.GetLane(lane, nameof(lane));
        ArgumentNullException.ThrowIfNull(work);
        return target.Run(work);
    }

    /// <summary>Runs <paramref name="work"/> in the lane <paramref name="lane"/> on the context's thread.</summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="lane">The lane.</param>
    /// <param name="work">The asynchronous work.</param>
    /// <returns>A task that completes with the work's result.</returns>
    /// <exception cref="ObjectDisposedException">The thread has been disposed.</exception>
    /// <exception cref="InvalidOperationException">The thread has been asked to stop.</exception>
    internal Task<T> RunAsync<T>(LanePriority lane, Func<Task<T>> work)
    {
        var target = Context.GetLane(lane, nameof(lane));
        ArgumentNullException.ThrowIfNull(work);
        return target.Run(work);
    }

    /// <summary>
    /// Asks the thread to stop: it waits for the work started in its lanes (up to
    /// <see cref="PrioritySchedulerOptions.ShutdownTimeout"/>), runs what is queued and exits. Do not await it from the thread
    /// itself: the caller's own work is part of what the stop waits for.
    /// </summary>
    /// <returns><see cref="Completion"/>.</returns>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "Returns Completion, the task of this type's own TaskCompletionSource; see Completion.")]
    public Task JoinAsync()
    {
        _stopRequested.TrySetResult();
        return Completion;
    }

    /// <summary>Asks the thread to exit and, unless called on that thread, waits for it. Never throws the run's exception; see <see cref="Completion"/>.</summary>
    public void Dispose()
    {
        _stopRequested.TrySetResult();
        if (Thread.CurrentThread != _thread)
        {
            _thread.Join();
        }

        Context.Dispose();
    }

    /// <summary>Asks the thread to exit and waits for it asynchronously. Never throws the run's exception; see <see cref="Completion"/>.</summary>
    /// <returns>A task that completes when the thread has exited.</returns>
    public async ValueTask DisposeAsync()
    {
        await JoinAsync().ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        Context.Dispose();
    }

    private void Main()
    {
        try
        {
            Context.Execute(async () =>
            {
                // These awaits must resume on the context's own thread (the lane): WhenDrainedAsync and the drain it
                // waits for belong to the context, so ConfigureAwait(false) would move the stop off the thread.
                // _stopRequested is this type's own TaskCompletionSource, completed by JoinAsync or Dispose; no
                // JoinableTaskFactory is involved.
#pragma warning disable MA0004, VSTHRD003 // see above: the continuation belongs in the lane; the task is our own
                await _stopRequested.Task;
                await Context.WhenDrainedAsync();
#pragma warning restore MA0004, VSTHRD003
            });
            _completion.TrySetResult();
        }
        catch (Exception ex)
        {
            _completion.TrySetException(ex);
        }
    }
}
