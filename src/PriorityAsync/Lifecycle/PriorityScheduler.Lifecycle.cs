using System.Diagnostics;

namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    private volatile AcceptanceState _acceptance;
    private int _outstandingOperations;
    private int _outstandingRuns;
    private long _rejectedWork;
    private TaskCompletionSource? _drained;

    /// <summary>
    /// Gets or sets whether and from where the scheduler accepts work. Change it under <see cref="Gate"/>; the setter
    /// is a full fence, so an enqueue that has not yet announced itself sees the new state.
    /// </summary>
    private protected AcceptanceState Acceptance
    {
        get => _acceptance;
        set
        {
            Debug.Assert(Monitor.IsEntered(Gate), "The acceptance state changes under the scheduler's Gate.");
            Debug.Assert(value >= _acceptance, $"The acceptance state only moves forward: {_acceptance} -> {value}.");
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
        ThrowIfNotAcceptingNewWork();
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
