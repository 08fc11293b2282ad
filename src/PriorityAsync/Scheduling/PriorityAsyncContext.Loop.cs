using System.Runtime.ExceptionServices;

namespace PriorityAsync;

public sealed partial class PriorityAsyncContext
{
    private ExceptionDispatchInfo? _failure;
    private bool _entryCompleted;
    private bool _waiting;

    /// <inheritdoc />
    private protected override void OnWorkAvailableLocked(int rank)
    {
        if (_waiting)
        {
            Monitor.Pulse(Gate);
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
                entry.ContinueWith(
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
        lock (Gate)
        {
            _entryCompleted = true;
            OnWorkAvailableLocked(AnyLane);
        }
    }

    private void RunLoop(Worker worker)
    {
        while (true)
        {
            WorkItem item;
            Lane lane;
            var advanceClock = false;
            lock (Gate)
            {
                while (!TryDequeueLocked(out item, out lane))
                {
                    if (_entryCompleted && OutstandingOperations == 0)
                    {
                        Acceptance = AcceptanceState.Closed;
                        return;
                    }

                    if (_virtualClock?.NextTimerDue is not null)
                    {
                        advanceClock = true;
                        break;
                    }

                    worker.LeaveLaneContext();
                    _waiting = true;
                    Monitor.Wait(Gate);
                    _waiting = false;
                }
            }

            if (advanceClock)
            {
                worker.LeaveLaneContext();
                _virtualClock!.TryAdvanceToNextTimer();
                continue;
            }

            Execute(worker, lane, item);
            if (_failure is { } failure)
            {
                RunQueuedItemsAfterFailure(worker);
                failure.Throw();
            }
        }
    }

    /// <summary>
    /// After a callback threw, takes no more work and runs what is already queued, so no task or continuation waits
    /// forever behind the failure; what arrives later is rejected to the thread pool.
    /// </summary>
    private void RunQueuedItemsAfterFailure(Worker worker)
    {
        lock (Gate)
        {
            Acceptance = AcceptanceState.Closing;
        }

        while (true)
        {
            WorkItem item;
            Lane lane;
            lock (Gate)
            {
                if (!TryDequeueLocked(out item, out lane))
                {
                    Acceptance = AcceptanceState.Closed;
                    return;
                }
            }

            Execute(worker, lane, item);
        }
    }
}
