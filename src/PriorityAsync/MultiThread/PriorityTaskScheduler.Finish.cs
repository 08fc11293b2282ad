namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    /// <summary>Counts a worker thread out; true for the last one, which then finishes the scheduler.</summary>
    private bool ExitWorkerLocked()
    {
        WakeAllWorkersLocked();
        return ++_exitedWorkers == _threads.Length && Volatile.Read(ref _activeRunners) == 0 && TryMarkFinishedLocked();
    }

    private bool TryMarkFinishedLocked()
    {
        if (_finished)
        {
            return false;
        }

        _finished = true;
        Acceptance = _disposeRequested ? AcceptanceState.Disposed : AcceptanceState.Closed;
        return true;
    }

    /// <summary>Stops the timer thread and completes <see cref="Completion"/>. Runs once, outside the lock.</summary>
    private void Finish()
    {
        RejectStragglers();
        ReleaseResources();
        lock (Gate)
        {
            while (_spareWorkers.Count > 0)
            {
                _spareWorkers.Pop().Dispose();
            }
        }

        if (_exceptions.IsEmpty)
        {
            _completion.TrySetResult();
        }
        else
        {
            _completion.TrySetException(_exceptions);
        }
    }
}
