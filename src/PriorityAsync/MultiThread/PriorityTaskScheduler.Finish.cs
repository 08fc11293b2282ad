namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    /// <summary>Counts a worker thread out; true for the last one, which then finishes the scheduler.</summary>
    private bool ExitWorkerLocked()
    {
        WakeAllWorkersLocked();
        return ++_exitedWorkers == _threads.Length && Volatile.Read(ref _activeRunners) == 0 && TryMarkFinishedLocked();
    }

    /// <summary>
    /// Called once the lane runs have finished or the shutdown timeout passed: take no more work, let the workers
    /// run what is queued and stop. With no worker thread and no runner active, the scheduler finishes here.
    /// </summary>
    private void OnDrained()
    {
        var finishNow = false;
        lock (Gate)
        {
            if (Acceptance == AcceptanceState.Draining)
            {
                Acceptance = AcceptanceState.Closing;
            }

            WakeAllWorkersLocked();
        }

        if (_threads.Length == 0)
        {
            if (!AreLanesEmpty())
            {
                TryStartRunner(); // a runner will run what is left and finish
                return;
            }

            lock (Gate)
            {
                finishNow = Volatile.Read(ref _activeRunners) == 0 && TryMarkFinishedLocked();
            }
        }

        if (finishNow)
        {
            Finish();
        }
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
