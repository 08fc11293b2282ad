using System.Runtime.ExceptionServices;

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
    private ExceptionDispatchInfo? _failure;
    private volatile bool _entryCompleted;

    // True while the final drain still takes the work this thread posts (see DrainAndClose).
    private volatile bool _drainTakesOwnWork;

    // 1 while the context's thread sleeps in Monitor.Wait(Gate); an enqueue then takes the lock to pulse it.
    private int _parked;

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
