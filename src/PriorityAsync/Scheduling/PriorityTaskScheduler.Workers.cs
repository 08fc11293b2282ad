namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    /// <inheritdoc />
    private protected override void OnWorkAvailableLocked()
    {
        if (Mode == PriorityWorkerMode.DedicatedThreads)
        {
            if (_idleWorkers > 0)
            {
                Monitor.Pulse(Gate);
            }
        }
        else if (_activeRunners < WorkerCount)
        {
            _activeRunners++;
            ThreadPool.UnsafeQueueUserWorkItem(static s => ((PriorityTaskScheduler)s!).ThreadPoolRunner(), this);
        }
    }

    private void DedicatedWorkerLoop()
    {
        var worker = new Worker(this);
        var finish = false;
        using (EnterWorker(worker))
        {
            while (TryTakeNext(worker, out var item, out var lane, out finish))
            {
                Execute(worker, lane, item);
                lock (Gate)
                {
                    _busyWorkers--;
                    if (_busyWorkers == 0 && Acceptance >= AcceptanceState.Closing)
                    {
                        Monitor.PulseAll(Gate);
                    }
                }
            }
        }

        worker.Dispose();
        if (finish)
        {
            // Outside the lock: Finish joins the timer thread, which may be waiting for the lock to enqueue a firing.
            Finish();
        }
    }

    /// <summary>
    /// Waits for the next item of a dedicated worker, sleeping until an enqueue pulses it. False when the worker must
    /// exit; <paramref name="finish"/> is then true for the last worker out.
    /// </summary>
    private bool TryTakeNext(Worker worker, out WorkItem item, out Lane lane, out bool finish)
    {
        finish = false;
        lock (Gate)
        {
            while (!TryDequeueLocked(out item, out lane))
            {
                worker.LeaveLaneContext();
                if (Acceptance >= AcceptanceState.Closing && _busyWorkers == 0)
                {
                    Monitor.PulseAll(Gate);
                    finish = ++_exitedWorkers == WorkerCount && TryMarkFinishedLocked();
                    return false;
                }

                _idleWorkers++;
                Monitor.Wait(Gate);
                _idleWorkers--;
            }

            _busyWorkers++;
            return true;
        }
    }

    private void ThreadPoolRunner()
    {
        Worker worker;
        lock (Gate)
        {
            worker = _spareWorkers.Count > 0 ? _spareWorkers.Pop() : new Worker(this);
        }

        var finish = false;
        using (EnterWorker(worker))
        {
            while (true)
            {
                WorkItem item;
                Lane lane;
                lock (Gate)
                {
                    if (!TryDequeueLocked(out item, out lane))
                    {
                        _activeRunners--;
                        _spareWorkers.Push(worker);
                        finish = Acceptance >= AcceptanceState.Closing && _activeRunners == 0 && TryMarkFinishedLocked();
                        break;
                    }
                }

                Execute(worker, lane, item);
            }
        }

        if (finish)
        {
            Finish();
        }
    }

    /// <summary>
    /// Called once the lane runs have finished or the shutdown timeout passed: take no more work, let the workers
    /// run what is queued and stop. With thread-pool runners and none active, the scheduler finishes here.
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

            if (Mode == PriorityWorkerMode.DedicatedThreads)
            {
                Monitor.PulseAll(Gate);
            }
            else
            {
                finishNow = _activeRunners == 0 && TryMarkFinishedLocked();
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
