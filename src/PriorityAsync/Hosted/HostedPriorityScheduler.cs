using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>
/// A priority scheduler whose lanes run on a thread it does not own: the thread of a single-thread
/// <see cref="SynchronizationContext"/> you pass in (a UI thread's, an event loop's, Nito.AsyncEx's <c>AsyncContext</c>).
/// </summary>
/// <remarks>
/// <para>
/// The lanes are those of the other schedulers (each a synchronization context and a task scheduler, so awaiting code
/// keeps its lane); their work runs on the host's thread, most urgent first, through one dispatch callback posted to the
/// host at a time. A dispatch runs items until the lanes are empty or <see cref="SliceBudget"/> has passed on the
/// scheduler's clock, then returns to the host's loop (posting the next dispatch if work is left), so the host's own
/// messages (input, paint) wait at most one budget plus one item.
/// </para>
/// <para>
/// The host must run what is posted to it on one thread, one callback at a time, in the order posted (FIFO). A dispatch
/// found on a second thread, or running while another runs, stops the scheduler with an
/// <see cref="InvalidOperationException"/> that faults <see cref="Completion"/> (nothing is thrown into the host, whose
/// posts may then run on the thread pool, where a thrown exception would end the process); a host whose
/// <see cref="SynchronizationContext.Post"/> throws (its thread has ended) does too. Either way the work still queued is
/// rejected onto the thread pool and counted in <see cref="PriorityScheduler.RejectedWorkCount"/>, never dropped. The
/// scheduler holds one operation on the host (<see cref="SynchronizationContext.OperationStarted"/>) from construction
/// until it has stopped, so a host that waits for its operations (Nito.AsyncEx's <c>AsyncContext.Run</c>) keeps its
/// thread until then.
/// </para>
/// <para>
/// <see cref="Complete"/> (or disposal) is the shutdown contract of <see cref="PriorityTaskScheduler"/>: work in flight
/// finishes (up to <see cref="PrioritySchedulerOptions.ShutdownTimeout"/>), what is queued runs, then <see cref="Completion"/>
/// completes; later work is rejected onto the thread pool and counted. An exception thrown by a posted callback (an
/// async void method) raises <see cref="PriorityScheduler.UnhandledException"/> and faults <see cref="Completion"/>.
/// Timers of <see cref="PriorityScheduler.TimeProvider"/> need no thread-pool thread. A <see cref="VirtualTimeProvider"/>
/// is not advanced by the scheduler: the host's loop is not its own.
/// </para>
/// </remarks>
[DebuggerDisplay("HostedPriorityScheduler {Name,nq}: {Lifetime,nq}, dispatch posted {_posted}, dispatching {_dispatching}")]
public sealed class HostedPriorityScheduler : PriorityScheduler, IAsyncDisposable
{
    /// <summary>The slice budget when none is given.</summary>
    private static readonly TimeSpan s_defaultSliceBudget = TimeSpan.FromMilliseconds(15);

    private readonly SchedulerCompletion _completion = new();
    private readonly SynchronizationContext _host;
    private readonly SchedulerWorker _worker;
    private readonly SendOrPostCallback _dispatch;

    // 1 while a dispatch is posted to the host and has not yet looked at the lanes for the last time.
    private int _posted;

    // 1 while a dispatch runs (two at once means the host is not single-thread).
    private int _dispatching;

    // The managed thread id of the host's thread, learned by the first dispatch; 0 before.
    private int _hostThreadId;

    /// <summary>Creates a scheduler whose lanes run on <paramref name="host"/>'s thread.</summary>
    /// <param name="host">A single-thread, FIFO synchronization context: a UI thread's, an event loop's.</param>
    /// <param name="options">The lanes, clock and limits; <see langword="null"/> for the defaults.</param>
    /// <param name="sliceBudget">
    /// How long one dispatch may run items before it returns to the host's loop; <see langword="null"/> for 15 ms.
    /// </param>
    /// <exception cref="ArgumentNullException"><paramref name="host"/> is <see langword="null"/>.</exception>
    /// <exception cref="ArgumentException">
    /// <paramref name="host"/> is known to run posts on several threads (the default <see cref="SynchronizationContext"/>,
    /// which posts to the thread pool), or an option breaks its rule; the exception names it.
    /// </exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="sliceBudget"/> is not positive.</exception>
    public HostedPriorityScheduler(SynchronizationContext host, PrioritySchedulerOptions? options = null, TimeSpan? sliceBudget = null)
        : base(ValidateHost(host, options), nameof(HostedPriorityScheduler))
    {
        if (sliceBudget is { } budget && budget <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(sliceBudget), budget, "The slice budget must be positive.");
        }

        _host = host;
        SliceBudget = sliceBudget ?? s_defaultSliceBudget;
        _worker = new SchedulerWorker(this);
        _dispatch = static s => ((HostedPriorityScheduler)s!).Dispatch();
        _host.OperationStarted();
    }

    /// <summary>Gets the synchronization context whose thread runs the lanes.</summary>
    internal SynchronizationContext Host => _host;

    /// <summary>Gets how long one dispatch may run items before it returns to the host's loop.</summary>
    internal TimeSpan SliceBudget { get; }

    /// <summary>
    /// Gets a task that completes when the scheduler has stopped after <see cref="Complete"/> or disposal. It is
    /// faulted with every exception reported through <see cref="PriorityScheduler.UnhandledException"/> until then,
    /// and with the <see cref="InvalidOperationException"/> of a host that broke its contract.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of the type's own SchedulerCompletion (RunContinuationsAsynchronously), completed only by the type itself.")]
    public Task Completion => _completion.Task;

    /// <inheritdoc />
    internal override int MaximumConcurrencyLevel => 1;

    /// <summary>
    /// Stops the scheduler gracefully, as <see cref="PriorityTaskScheduler.Complete"/> does: work in flight finishes
    /// (up to <see cref="PrioritySchedulerOptions.ShutdownTimeout"/>), the items queued run on the host, then
    /// <see cref="Completion"/> completes. Returns at once; safe to call from any thread, more than once.
    /// </summary>
    public void Complete() => BeginGracefulStop();

    /// <summary>
    /// Completes the scheduler (see <see cref="Complete"/>) and, unless called on the host's thread (which the stop
    /// needs), waits until it has stopped. Never throws the work's exceptions (see <see cref="Completion"/>). Once
    /// stopped, the scheduler is disposed: <see cref="Lane.Run(Func{Task})"/> throws <see cref="ObjectDisposedException"/>.
    /// </summary>
    public override void Dispose()
    {
        BeginDispose();
        _completion.WaitUnless(IsOnHostThread);
    }

    /// <summary>Completes the scheduler (see <see cref="Complete"/>) and waits asynchronously until it has stopped.</summary>
    /// <returns>A task that completes when the scheduler has stopped.</returns>
    public ValueTask DisposeAsync()
    {
        BeginDispose();

        // Even on the host's thread: awaiting gives the thread back to the host, which runs the stop.
        return _completion.WaitUnlessAsync(onTheSchedulersThread: false);
    }

    /// <inheritdoc />
    private protected override void OnCallbackException(Lane lane, Exception exception)
    {
        _completion.Report(exception);
        RaiseUnhandledException(lane, exception);
    }

    /// <inheritdoc />
    private protected override void OnWorkAvailable(int rank) => PostDispatch();

    private bool IsOnHostThread =>
        IsWorkerThread
        || ReferenceEquals(SynchronizationContext.Current, _host)
        || (Volatile.Read(ref _hostThreadId) is var id && id != 0 && id == Environment.CurrentManagedThreadId);

    /// <summary>Checks the host before the base constructor starts a timer thread; returns <paramref name="options"/>.</summary>
    private static PrioritySchedulerOptions? ValidateHost(SynchronizationContext host, PrioritySchedulerOptions? options)
    {
        ArgumentNullException.ThrowIfNull(host);
        if (host.GetType() == typeof(SynchronizationContext))
        {
            throw new ArgumentException(
                "The host must run its posts on one thread, in order; the default SynchronizationContext runs them on the thread pool. Pass a UI thread's or an event loop's context.",
                nameof(host));
        }

        if (host is LaneSynchronizationContext)
        {
            throw new ArgumentException(
                "The host must be a single-thread context of its own, not a lane of a PriorityScheduler; use that scheduler's lanes.",
                nameof(host));
        }

        return options;
    }

    /// <summary>Posts the dispatch to the host unless one is posted already.</summary>
    [SuppressMessage("Usage", "VSTHRD001:Avoid legacy thread switching APIs", Justification = "Posting to the host's SynchronizationContext is what this type is: its lanes run on a thread it does not own, through the host's own queue; no JoinableTaskFactory exists here.")]
    private void PostDispatch()
    {
        if (Lifetime.HasFinished || Interlocked.CompareExchange(ref _posted, 1, 0) != 0)
        {
            return;
        }

        try
        {
            _host.Post(_dispatch, this);
        }
        catch (Exception ex)
        {
            Fail(new InvalidOperationException($"The host {_host.GetType().Name} of {this} refused the dispatch (its thread has ended?); the work queued is rejected onto the thread pool.", ex));
        }
    }

    /// <summary>The one callback posted to the host: runs items most urgent first until the lanes are empty or the budget is spent.</summary>
    private void Dispatch()
    {
        var thread = Environment.CurrentManagedThreadId;
        var first = Interlocked.CompareExchange(ref _hostThreadId, thread, 0);
        if (first != 0 && first != thread)
        {
            // Never thrown into the host: a host that breaks the contract may run its posts on the thread pool, where an
            // exception thrown by the callback would end the process.
            Fail(new InvalidOperationException($"{this}: the dispatch ran on thread {thread}, but the host ran it on thread {first} before; the host must run its posts on one thread."));
            return;
        }

        if (Interlocked.Exchange(ref _dispatching, 1) != 0)
        {
            Fail(new InvalidOperationException($"{this}: two dispatches ran at once; the host must run its posts one at a time."));
            return;
        }

        try
        {
            RunSlice();
        }
        finally
        {
            Volatile.Write(ref _dispatching, 0);
        }
    }

    private void RunSlice()
    {
        if (Lifetime.HasFinished)
        {
            return;
        }

        var start = Clock.GetTimestamp();
        using (EnterWorker(_worker))
        {
            while (TryDequeue(_worker, out var item, out var lane))
            {
                Execute(_worker, lane, item);
                if (Clock.GetElapsedTime(start) >= SliceBudget)
                {
                    break;
                }
            }
        }

        // An enqueue either saw the flag still set (and relies on the look below) or posts a dispatch itself.
        Interlocked.Exchange(ref _posted, 0);
        if (Lifetime.State == AcceptanceState.Closing && AreLanesEmpty())
        {
            // Whoever finishes the scheduler (this dispatch, or a failing host) completes its stop, once.
            if (Lifetime.TryFinish())
            {
                Finish(null);
            }

            return;
        }

        if (IsReady(AllLanes))
        {
            PostDispatch();
        }
    }

    /// <summary>Called once work in flight has finished or the shutdown timeout passed and the scheduler closed: run what is queued on the host, stop.</summary>
    /// <remarks>The last dispatch runs what is queued and finishes the scheduler on the host's thread.</remarks>
    private protected override void OnClosedAfterDrain() => PostDispatch();

    /// <summary>Stops the scheduler because the host broke its contract: what is queued, and what comes later, is rejected.</summary>
    private void Fail(Exception error)
    {
        if (Lifetime.TryFinish())
        {
            Finish(error);
        }
    }

    /// <summary>Rejects stragglers, releases the timer thread and the host's operation, completes <see cref="Completion"/>. Runs once.</summary>
    private void Finish(Exception? error)
    {
        RejectStragglers();
        _worker.Dispose();
        ReleaseResources();
        try
        {
            _host.OperationCompleted();
        }
        catch (Exception ex)
        {
            _completion.Report(ex);
        }

        if (error is not null)
        {
            _completion.Report(error);
        }

        _completion.Complete();
    }
}
