using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
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
/// stays on its thread, for at most <see cref="PrioritySchedulerOptions.ShutdownTimeout"/> after the end (an item that
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
[DebuggerDisplay("PriorityAsyncContext {Name,nq}: {Lifetime,nq}, running {_running}, parked {_parked}")]
public sealed class PriorityAsyncContext : PriorityScheduler
{
    private readonly VirtualTimeProvider? _virtualClock;
    private bool _started;
    private bool _running;
    private ExceptionDispatchInfo? _failure;
    private volatile bool _entryCompleted;

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
    internal bool IsVirtualTime => _virtualClock is not null;

    /// <inheritdoc />
    internal override int MaximumConcurrencyLevel => 1;

    /// <summary>
    /// Releases the context's timer thread. Called while the context runs (from inside or another thread), it takes
    /// effect when the run ends; it never waits for the run.
    /// </summary>
    public override void Dispose()
    {
        bool release;
        lock (Gate)
        {
            var disposed = Lifetime.RequestDispose();

            // A run in progress finishes the context itself and releases its resources at its end; a context that
            // never ran, or whose run has ended, has nothing left to finish.
            release = !_running && (disposed || Lifetime.TryFinish());
        }

        if (release)
        {
            ReleaseResources();
        }
    }

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

    /// <inheritdoc />
    private protected override void OnCallbackException(Lane lane, Exception exception)
    {
        if (_failure is null)
        {
            _failure = ExceptionDispatchInfo.Capture(exception);
        }
        else
        {
            // The run already ends with the first exception; later ones (while the queue drains) are reported.
            RaiseUnhandledException(lane, exception);
        }
    }

    [SuppressMessage("Usage", "VSTHRD200:Use Async suffix for async methods", Justification = "It runs synchronously: it returns only after the loop has run the entry task to completion, and the caller just reads its result; an Async suffix would say the opposite.")]
    [SuppressMessage("Usage", "MA0100:Await task before disposing of resources", Justification = "RunLoop returns only once the entry task has completed, so the task returned inside the using block is already complete when the worker scope is disposed.")]
    private Task RunToCompletion(Func<Task> start)
    {
        lock (Gate)
        {
            if (Lifetime.State == AcceptanceState.Disposed)
            {
                throw new ObjectDisposedException(ToString(), $"{this} has been disposed.");
            }

            if (_started)
            {
                throw new InvalidOperationException($"{this} has already run an entry point; a context runs one. Create a new PriorityAsyncContext.");
            }

            _started = true;
            _running = true;
        }

        var worker = new SchedulerWorker(this);
        try
        {
            using (EnterWorker(worker))
            {
                var entry = start();
                SynchronousContinuation.Attach(entry, static (_, state) => ((PriorityAsyncContext)state!).OnEntryCompleted(), this);
                RunLoop(worker);
                return entry;
            }
        }
        finally
        {
            worker.Dispose();
            bool dispose;
            lock (Gate)
            {
                Debug.Assert(_started && _running, "Only a started run ends.");
                _running = false;
                Lifetime.TryFinish();
                dispose = Lifetime.State == AcceptanceState.Disposed;
            }

            if (dispose)
            {
                ReleaseResources();
            }
        }
    }

    private void OnEntryCompleted()
    {
        _entryCompleted = true;
        OnWorkAvailable(AnyLane);
    }

    /// <summary>Runs <paramref name="entry"/> in the most urgent lane, on the calling thread, until it completes.</summary>
    /// <param name="entry">The async entry point.</param>
    /// <exception cref="InvalidOperationException">The context has already run an entry point.</exception>
    internal void Execute(Func<Task> entry) => Execute(LanePriority.FromRank(0), entry);

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
    internal T Execute<T>(Func<Task<T>> entry) => Execute(LanePriority.FromRank(0), entry);

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

    /// <inheritdoc />
    private protected override void OnWorkAvailable(int rank)
    {
        if (Volatile.Read(ref _parked) != 0)
        {
            lock (Gate)
            {
                Monitor.Pulse(Gate);
            }
        }
    }

    private bool IsRunOver => _entryCompleted && OutstandingOperations == 0;

    private void RunLoop(SchedulerWorker worker)
    {
        while (true)
        {
            if (TryDequeue(worker, out var item, out var lane))
            {
                Execute(worker, lane, item);
                if (_failure is not null || IsRunOver)
                {
                    // Checked after every item, not only when the lanes are empty: threads that keep posting must not
                    // keep a finished run alive. What is queued runs; what arrives from now on is rejected.
                    DrainAndClose(worker);
                    _failure?.Throw();
                    return;
                }

                continue;
            }

            if (IsRunOver)
            {
                DrainAndClose(worker);
                _failure?.Throw();
                return;
            }

            worker.LeaveLaneContext();
            if (_virtualClock?.NextTimerDue is not null)
            {
                _virtualClock.TryAdvanceToNextTimer();
                continue;
            }

            Park();
        }
    }

    /// <summary>Sleeps until an enqueue, the end of the entry point or of an operation pulses the thread.</summary>
    private void Park()
    {
        lock (Gate)
        {
            Interlocked.Exchange(ref _parked, 1);
            if (!IsReady(AllLanes) && !IsRunOver && _virtualClock?.NextTimerDue is null)
            {
                Monitor.Wait(Gate);
            }

            Volatile.Write(ref _parked, 0);
        }
    }

    /// <summary>
    /// Ends the run: takes no more work from other threads, runs what is already queued (so no task or continuation
    /// waits forever behind the end or behind a failure) together with what those items queue from this thread, then
    /// closes; what arrives later, or from another thread, is rejected to the thread pool.
    /// </summary>
    /// <remarks>
    /// Work the run's own items post (a continuation after <c>await Task.Yield()</c>, a <c>Post</c>) stays on this
    /// thread, as it would in Nito.AsyncEx: code written for one thread never runs on two. An item that re-posts itself
    /// forever is the program's own loop; it is bounded by <see cref="PrioritySchedulerOptions.ShutdownTimeout"/>, measured on
    /// the real clock from the start of the drain (a virtual clock stands still meanwhile): after it, this thread's
    /// posts are rejected like any late work, what is queued still runs, and the run returns.
    /// </remarks>
    private void DrainAndClose(SchedulerWorker worker)
    {
        var bound = ShutdownTimeout;
        var takesOwnWork = bound != TimeSpan.Zero;
        Lifetime.TryClose(takesOwnWork);
        var start = Stopwatch.GetTimestamp();
        while (TryDequeue(worker, out var item, out var lane))
        {
            Execute(worker, lane, item);
            if (takesOwnWork && bound != Timeout.InfiniteTimeSpan && Stopwatch.GetElapsedTime(start) >= bound)
            {
                // The items still queued run; from now on this thread's posts are late work too.
                takesOwnWork = false;
                Lifetime.StopTakingOwnWork();
            }
        }

        Lifetime.TryFinish();

        // An enqueue that raced with the close either sees it and rejects its item itself, or left it here.
        RejectStragglers();
    }
}
