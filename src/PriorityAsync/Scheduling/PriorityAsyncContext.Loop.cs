using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.ExceptionServices;

namespace PriorityAsync;

public sealed partial class PriorityAsyncContext
{
    private ExceptionDispatchInfo? _failure;
    private volatile bool _entryCompleted;

    // True while the final drain still takes the work this thread posts (see DrainAndClose).
    private volatile bool _drainTakesOwnWork;

    // 1 while the context's thread sleeps in Monitor.Wait(Gate); an enqueue then takes the lock to pulse it.
    private int _parked;

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
            if (Acceptance == AcceptanceState.Disposed)
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

        var worker = new Worker(this);
        try
        {
            using (EnterWorker(worker))
            {
                var entry = start();
                _ = entry.ContinueWith(
                    static (_, state) => ((PriorityAsyncContext)state!).OnEntryCompleted(),
                    this,
                    CancellationToken.None,
                    TaskContinuationOptions.ExecuteSynchronously,
                    TaskScheduler.Default);
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
                _running = false;
                dispose = _disposeWhenDone;
                Acceptance = dispose ? AcceptanceState.Disposed : AcceptanceState.Closed;
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

    private bool IsRunOver => _entryCompleted && OutstandingOperations == 0;

    private void RunLoop(Worker worker)
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

    /// <inheritdoc />
    private protected override bool TakesOwnWorkWhileClosing => _drainTakesOwnWork;

    /// <summary>
    /// Ends the run: takes no more work from other threads, runs what is already queued (so no task or continuation
    /// waits forever behind the end or behind a failure) together with what those items queue from this thread, then
    /// closes; what arrives later, or from another thread, is rejected to the thread pool.
    /// </summary>
    /// <remarks>
    /// Work the run's own items post (a continuation after <c>await Task.Yield()</c>, a <c>Post</c>) stays on this
    /// thread, as it would in Nito.AsyncEx: code written for one thread never runs on two. An item that re-posts itself
    /// forever is the program's own loop; it is bounded by <see cref="PriorityScheduler.ShutdownTimeout"/>, measured on
    /// the real clock from the start of the drain (a virtual clock stands still meanwhile): after it, this thread's
    /// posts are rejected like any late work, what is queued still runs, and the run returns.
    /// </remarks>
    private void DrainAndClose(Worker worker)
    {
        lock (Gate)
        {
            _drainTakesOwnWork = ShutdownTimeout != TimeSpan.Zero;
            Acceptance = AcceptanceState.Closing;
        }

        var bound = ShutdownTimeout;
        var start = Stopwatch.GetTimestamp();
        while (TryDequeue(worker, out var item, out var lane))
        {
            Execute(worker, lane, item);
            if (_drainTakesOwnWork && bound != Timeout.InfiniteTimeSpan && Stopwatch.GetElapsedTime(start) >= bound)
            {
                // The items still queued run; from now on this thread's posts are late work too.
                _drainTakesOwnWork = false;
            }
        }

        lock (Gate)
        {
            _drainTakesOwnWork = false;
            Acceptance = AcceptanceState.Closed;
        }

        // An enqueue that raced with the close either sees it and rejects its item itself, or left it here.
        RejectStragglers();
    }
}
