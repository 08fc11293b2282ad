using System.Diagnostics;

namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    private int _outstandingOperations;
    private int _outstandingRuns;
    private long _rejectedWork;
    private TaskCompletionSource? _drained;

    /// <summary>Gets the scheduler's lifetime: whether and from where it takes work; every change of it goes through this.</summary>
    private protected SchedulerLifetime Lifetime { get; }

    /// <summary>
    /// Throws when the scheduler takes no new work from the calling thread: <see cref="ObjectDisposedException"/>
    /// after disposal, <see cref="InvalidOperationException"/> once it has finished, or while it shuts down and the
    /// caller is not one of its own threads. These are the checks <see cref="Lane.Run(Func{Task})"/> makes before it
    /// takes work; a component that starts work in the lanes later (a lease keeper taking a lease) makes them up front.
    /// </summary>
    /// <exception cref="ObjectDisposedException">The scheduler has been disposed.</exception>
    /// <exception cref="InvalidOperationException">
    /// The scheduler has finished, or is shutting down and the caller is not one of its threads.
    /// </exception>
    public void ThrowIfNotAcceptingNewWork() => Lifetime.ThrowIfNotAcceptingNewWork();

    /// <summary>
    /// Begins a graceful stop (see <see cref="SchedulerLifetime.TryBeginDraining"/>): once no lane run and no async void
    /// operation is outstanding, or <see cref="ShutdownTimeout"/> has passed, the scheduler closes and
    /// <see cref="OnClosedAfterDrain"/> runs what is queued and finishes it. Returns at once; only the first call begins it.
    /// </summary>
    private protected void BeginGracefulStop()
    {
        if (Lifetime.TryBeginDraining())
        {
            SynchronousContinuation.Attach(WhenDrainedAsync(), static (_, s) => ((PriorityScheduler)s!).CloseAfterDrain(), this);
        }
    }

    /// <summary>
    /// Asks for the scheduler's disposal (it is disposed once it has finished, see <see cref="SchedulerLifetime.RequestDispose"/>)
    /// and begins its graceful stop.
    /// </summary>
    private protected void BeginDispose()
    {
        Lifetime.RequestDispose();
        BeginGracefulStop();
    }

    /// <summary>
    /// Called once a graceful stop begun by <see cref="BeginGracefulStop"/> has closed the scheduler (or found it
    /// finished already): let the workers run what is queued, then finish. A scheduler that never begins one
    /// (<see cref="PriorityAsyncContext"/>, which closes at the end of its run) never gets it.
    /// </summary>
    private protected virtual void OnClosedAfterDrain()
    {
    }

    private void CloseAfterDrain()
    {
        Lifetime.TryClose();
        OnClosedAfterDrain();
    }

    /// <summary>Gets the number of async void operations started in a lane that have not completed.</summary>
    private protected int OutstandingOperations => Volatile.Read(ref _outstandingOperations);

    internal void OperationStarted() => Interlocked.Increment(ref _outstandingOperations);

    internal void OperationCompleted()
    {
        var outstanding = Interlocked.Decrement(ref _outstandingOperations);
        Debug.Assert(outstanding >= 0, "An async void operation completed that was never started.");
        if (outstanding == 0)
        {
            OnWorkAvailable(AnyLane);
            SignalIfDrained();
        }
    }

    /// <summary>Counts one lane run as outstanding, after checking that the calling thread may start work.</summary>
    internal void StartTrackedRun()
    {
        Lifetime.ThrowIfNotAcceptingNewWork();
        Interlocked.Increment(ref _outstandingRuns);
    }

    /// <summary>Ends the outstanding run counted by <see cref="StartTrackedRun"/> when <paramref name="run"/> completes.</summary>
    /// <param name="run">The task of the run.</param>
    internal void EndTrackedRunWhenDone(Task run) =>
        SynchronousContinuation.Attach(run, static (_, s) => ((PriorityScheduler)s!).RunCompleted(), this);

    /// <summary>Ends one outstanding run.</summary>
    internal void RunCompleted()
    {
        var outstanding = Interlocked.Decrement(ref _outstandingRuns);
        Debug.Assert(outstanding >= 0, "A lane run ended that was never counted.");
        if (outstanding == 0)
        {
            SignalIfDrained();
        }
    }

    /// <summary>
    /// Returns a task that completes when no lane run (<see cref="Lane.Run(Func{Task})"/>) and no async void operation
    /// is outstanding, or when <see cref="ShutdownTimeout"/> has passed on the scheduler's clock, whichever comes first.
    /// It completes on the thread that ends the last run or on the clock's timer thread; continuations must be short.
    /// </summary>
    internal Task WhenDrainedAsync()
    {
        Task drained;
        lock (Gate)
        {
            _drained ??= new TaskCompletionSource();
            drained = _drained.Task;
        }

        SignalIfDrained();
        if (drained.IsCompleted || ShutdownTimeout == Timeout.InfiniteTimeSpan)
        {
            return drained;
        }

        var timeout = new CancellationTokenSource();
        var deadline = Task.Delay(ShutdownTimeout, _clock, timeout.Token);
        return Task.WhenAny(drained, deadline).ContinueWith(
            static (_, s) =>
            {
                var timeout = (CancellationTokenSource)s!;
                timeout.Cancel();
                timeout.Dispose();
            },
            timeout,
            CancellationToken.None,
            TaskContinuationOptions.ExecuteSynchronously,
            TaskScheduler.Default);
    }

    private void SignalIfDrained()
    {
        if (Volatile.Read(ref _outstandingRuns) == 0 && Volatile.Read(ref _outstandingOperations) == 0)
        {
            TaskCompletionSource? drained;
            lock (Gate)
            {
                drained = _drained;
            }

            drained?.TrySetResult();
        }
    }

    /// <summary>
    /// Gets how many continuations, posts, tasks and timer firings reached a lane after the scheduler stopped taking
    /// work. Such work is never dropped and never thrown back into the runtime: it runs on the .NET thread pool,
    /// without a synchronization context, so the code awaiting it resumes.
    /// </summary>
    internal long RejectedWorkCount => Interlocked.Read(ref _rejectedWork);

    /// <summary>Raises <see cref="UnhandledException"/>; an exception of a handler is ignored.</summary>
    internal void RaiseUnhandledException(Lane lane, Exception exception)
    {
        try
        {
            UnhandledException?.Invoke(this, new SchedulerExceptionEventArgs(lane, exception));
        }
        catch (Exception)
        {
            // A handler that throws has nowhere to report to; the event says handlers must not throw.
        }
    }

    /// <summary>
    /// Rejects (see <see cref="RejectedWork"/>) every item still queued once the scheduler has finished: an enqueue
    /// that raced with the finish. Called by the finisher after it marked the scheduler finished, and by such an enqueue.
    /// </summary>
    private protected void RejectStragglers()
    {
        while (TryDequeue(null, AllLanes, out var item, out var lane))
        {
            Reject(lane, item);
        }
    }

    /// <summary>Raises <see cref="RejectedWork"/>; an exception of a handler is ignored.</summary>
    internal void RaiseRejectedWork(Lane lane, RejectedWorkKind kind)
    {
        try
        {
            RejectedWork?.Invoke(this, new RejectedWorkEventArgs(lane, kind));
        }
        catch (Exception)
        {
            // The event says handlers must not throw; the work still runs.
        }
    }

    /// <summary>Counts work that arrived after the scheduler stopped and runs it on the thread pool.</summary>
    private void Reject(Lane lane, in LaneWorkItem item)
    {
        Interlocked.Increment(ref _rejectedWork);
        if (PriorityAsyncMetrics.Rejected.Enabled)
        {
            var tags = PriorityAsyncMetrics.Tags(lane);
            tags.Add(PriorityAsyncMetrics.KindTag, PriorityAsyncMetrics.KindName(item.Kind));
            PriorityAsyncMetrics.Rejected.Add(1, tags);
        }

        ThreadPool.UnsafeQueueUserWorkItem(static w => w.Run(), new RejectedLaneWork(lane, item), preferLocal: false);
    }
}
