namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>Gets the number of async void operations started in a lane that have not completed.</summary>
    private protected int OutstandingOperations => Volatile.Read(ref _outstandingOperations);

    internal void OperationStarted() => Interlocked.Increment(ref _outstandingOperations);

    internal void OperationCompleted()
    {
        if (Interlocked.Decrement(ref _outstandingOperations) == 0)
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
        if (Interlocked.Decrement(ref _outstandingRuns) == 0)
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
}
