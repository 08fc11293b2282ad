using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>
/// A single-thread priority scheduler: runs an async entry point on the calling thread, with every continuation
/// of every lane on that one thread (the WinForms and asyncio model), most urgent lane first.
/// </summary>
/// <remarks>
/// <para>
/// Posts from other threads (timers, I/O completions, tasks completed elsewhere) are queued into their lane and run
/// on the context's thread. <see cref="Execute(Func{Task})"/> returns when the entry point's task has completed and
/// every async void operation started in the context has finished; items still queued at that point run first, and
/// so does what they post from the context's thread (an <c>await Task.Yield()</c>, a <c>Post</c>): the run's own work
/// stays on its thread, for at most <see cref="PriorityScheduler.ShutdownTimeout"/> after the end (an item that
/// re-posts itself forever is the program's own loop; after that bound its posts are late work).
/// An exception thrown by a posted callback (for example from an async void method) ends the run and is rethrown
/// by <c>Execute</c>, after the items already queued have run (nothing is stranded); an exception of the entry point
/// is rethrown as well.
/// </para>
/// <para>
/// Work that arrives after the run, or from another thread while it ends (a continuation of a fire-and-forget
/// <see cref="Lane.Run(Func{Task})"/> resumed by a timer or I/O, a timer firing, a post), is rejected: it runs on the
/// thread pool and counts in <see cref="PriorityScheduler.RejectedWorkCount"/>; nothing throws into the runtime and no
/// awaiting code is left hanging.
/// </para>
/// <para>
/// With a <see cref="VirtualTimeProvider"/> as <see cref="PrioritySchedulerOptions.TimeProvider"/>, the context jumps
/// the clock to the next due timer whenever no lane has ready work, so a scenario of many minutes runs in
/// milliseconds, with the same result on every run as long as all the work runs in the context.
/// </para>
/// <para>A context runs one entry point; create a new one for the next.</para>
/// </remarks>
public sealed partial class PriorityAsyncContext : PriorityScheduler, IDisposable
{
    private readonly VirtualTimeProvider? _virtualClock;
    private bool _started;
    private bool _running;
    private bool _disposeWhenDone;

    /// <summary>Creates a context with the given options (the default lane set and real time when omitted).</summary>
    /// <param name="options">The options; validated here.</param>
    /// <exception cref="ArgumentException">An option breaks its rule; the exception names it.</exception>
    public PriorityAsyncContext(PrioritySchedulerOptions? options = null)
        : base(options, nameof(PriorityAsyncContext))
    {
        _virtualClock = options?.TimeProvider as VirtualTimeProvider;
    }

    /// <summary>Gets whether the context runs on virtual time.</summary>
    public bool IsVirtualTime => _virtualClock is not null;

    /// <inheritdoc />
    internal override int MaximumConcurrencyLevel => 1;

    /// <summary>Runs <paramref name="entry"/> in the most urgent lane of a new context on the calling thread.</summary>
    /// <param name="entry">The async entry point.</param>
    /// <param name="options">The context's options; <see langword="null"/> for the defaults.</param>
    public static void Run(Func<Task> entry, PrioritySchedulerOptions? options = null)
    {
        using var context = new PriorityAsyncContext(options);
        context.Execute(entry);
    }

    /// <summary>Runs <paramref name="entry"/> in the most urgent lane of a new context on the calling thread.</summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="entry">The async entry point.</param>
    /// <param name="options">The context's options; <see langword="null"/> for the defaults.</param>
    /// <returns>The entry point's result.</returns>
    public static T Run<T>(Func<Task<T>> entry, PrioritySchedulerOptions? options = null)
    {
        using var context = new PriorityAsyncContext(options);
        return context.Execute(entry);
    }

    /// <summary>Runs <paramref name="entry"/> in the most urgent lane, on the calling thread, until it completes.</summary>
    /// <param name="entry">The async entry point.</param>
    /// <exception cref="InvalidOperationException">The context has already run an entry point.</exception>
    public void Execute(Func<Task> entry) => Execute(LanePriority.FromRank(0), entry);

    /// <summary>Runs <paramref name="entry"/> in the lane <paramref name="lane"/>, on the calling thread, until it completes.</summary>
    /// <param name="lane">The lane the entry point starts in.</param>
    /// <param name="entry">The async entry point.</param>
    /// <exception cref="InvalidOperationException">The context has already run an entry point.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The context has no lane of that rank.</exception>
    /// <exception cref="ObjectDisposedException">The context has been disposed.</exception>
    [SuppressMessage("Usage", "VSTHRD002:Avoid problematic synchronous waits", Justification = "Execute is the synchronous entry point (like Nito.AsyncEx's AsyncContext.Run): RunToCompletion runs the loop on this thread until the entry task has completed, so GetResult never blocks; it only returns the result or rethrows the exception.")]
    public void Execute(LanePriority lane, Func<Task> entry)
    {
        var start = GetLane(lane, nameof(lane));
        ArgumentNullException.ThrowIfNull(entry);
        RunToCompletion(() => start.RunEntryAsync(entry)).GetAwaiter().GetResult();
    }

    /// <summary>Runs <paramref name="entry"/> in the most urgent lane, on the calling thread, until it completes.</summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="entry">The async entry point.</param>
    /// <returns>The entry point's result.</returns>
    /// <exception cref="InvalidOperationException">The context has already run an entry point.</exception>
    public T Execute<T>(Func<Task<T>> entry) => Execute(LanePriority.FromRank(0), entry);

    /// <summary>Runs <paramref name="entry"/> in the lane <paramref name="lane"/>, on the calling thread, until it completes.</summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="lane">The lane the entry point starts in.</param>
    /// <param name="entry">The async entry point.</param>
    /// <returns>The entry point's result.</returns>
    /// <exception cref="InvalidOperationException">The context has already run an entry point.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The context has no lane of that rank.</exception>
    /// <exception cref="ObjectDisposedException">The context has been disposed.</exception>
    [SuppressMessage("Usage", "VSTHRD002:Avoid problematic synchronous waits", Justification = "Execute is the synchronous entry point (like Nito.AsyncEx's AsyncContext.Run): RunToCompletion runs the loop on this thread until the entry task has completed, so GetResult never blocks; it only returns the result or rethrows the exception.")]
    public T Execute<T>(LanePriority lane, Func<Task<T>> entry)
    {
        var start = GetLane(lane, nameof(lane));
        ArgumentNullException.ThrowIfNull(entry);
        return ((Task<T>)RunToCompletion(() => start.RunEntryAsync(entry))).GetAwaiter().GetResult();
    }

    /// <summary>
    /// Releases the context's timer thread. Called while the context runs (from inside or another thread), it takes
    /// effect when the run ends; it never waits for the run.
    /// </summary>
    public void Dispose()
    {
        lock (Gate)
        {
            if (_running)
            {
                _disposeWhenDone = true;
                return;
            }

            Acceptance = AcceptanceState.Disposed;
        }

        ReleaseResources();
    }
}
