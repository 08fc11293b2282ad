using System.Diagnostics.CodeAnalysis;
using System.Runtime.ExceptionServices;

namespace PriorityAsync;

public sealed partial class PriorityAsyncContext
{
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
}
