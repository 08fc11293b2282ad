namespace PriorityAsync;

/// <summary>
/// A <see cref="PriorityAsyncContext"/> running on a dedicated thread it owns, for code that needs a single-thread
/// priority scheduler without giving it the calling thread (a service, a test, a UI-less host).
/// </summary>
/// <remarks>
/// Queue work with <see cref="RunAsync(LanePriority, Func{Task})"/> or through <see cref="Context"/>'s lanes. The
/// thread runs until <see cref="JoinAsync"/> or disposal; then the items already queued run and the thread exits.
/// </remarks>
public sealed class PriorityAsyncContextThread : IDisposable, IAsyncDisposable
{
    private readonly TaskCompletionSource _stopRequested = new(TaskCreationOptions.RunContinuationsAsynchronously);
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
    public Task Completion => _completion.Task;

    /// <summary>Runs <paramref name="work"/> in the lane <paramref name="lane"/> on the context's thread.</summary>
    /// <param name="lane">The lane.</param>
    /// <param name="work">The asynchronous work.</param>
    /// <returns>A task that completes with the work.</returns>
    public Task RunAsync(LanePriority lane, Func<Task> work) => Context.GetLane(lane).Run(work);

    /// <summary>Runs <paramref name="work"/> in the lane <paramref name="lane"/> on the context's thread.</summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="lane">The lane.</param>
    /// <param name="work">The asynchronous work.</param>
    /// <returns>A task that completes with the work's result.</returns>
    public Task<T> RunAsync<T>(LanePriority lane, Func<Task<T>> work) => Context.GetLane(lane).Run(work);

    /// <summary>Asks the thread to finish the queued work and exit.</summary>
    /// <returns><see cref="Completion"/>.</returns>
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
            Context.Execute(() => _stopRequested.Task);
            _completion.TrySetResult();
        }
        catch (Exception ex)
        {
            _completion.TrySetException(ex);
        }
    }
}
