namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    /// <inheritdoc />
    private protected override void OnWorkAvailableLocked(int rank)
    {
        if (Mode == PriorityWorkerMode.DedicatedThreads)
        {
            if (_idleWorkers > 0)
            {
                Monitor.Pulse(Gate);
                return;
            }
        }
        else if (_activeRunners < WorkerCount)
        {
            _activeRunners++;
            ThreadPool.UnsafeQueueUserWorkItem(static s => ((PriorityTaskScheduler)s!).ThreadPoolRunner(), this);
        }

        // Every dedicated worker is busy, or (thread-pool runners) the runner may wait in a starved pool's queue: work of
        // a reserved lane wakes a reserved worker. The waker claims it, so two items never count on the same one.
        if (rank != AnyLane && rank <= ReservedLane.Rank && _idleReserved > 0)
        {
            _idleReserved--;
            _reservedWake.Release();
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
                EndItem();
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
    /// The loop of a reserved worker: it takes only items of the reserved lanes and sleeps on its own semaphore, so a
    /// pulse meant for an ordinary worker never lands on it (and is never lost).
    /// </summary>
    private void ReservedWorkerLoop()
    {
        var worker = new Worker(this);
        var finish = false;
        using (EnterWorker(worker))
        {
            while (true)
            {
                WorkItem item;
                Lane lane;
                lock (Gate)
                {
                    if (!TryDequeueLocked(_reservedLanes, out item, out lane))
                    {
                        worker.LeaveLaneContext();
                        if (Acceptance >= AcceptanceState.Closing && _busyWorkers == 0 && IsEmptyLocked)
                        {
                            finish = ExitWorkerLocked();
                            break;
                        }

                        _idleReserved++;
                        lane = null!;
                    }
                    else
                    {
                        _busyWorkers++;
                    }
                }

                if (lane is null)
                {
                    _reservedWake.Wait();
                    continue;
                }

                Execute(worker, lane, item);
                EndItem();
            }
        }

        worker.Dispose();
        if (finish)
        {
            Finish();
        }
    }

    /// <summary>Ends one item of a dedicated or reserved worker; the last item of a closing scheduler wakes the others to exit.</summary>
    private void EndItem()
    {
        lock (Gate)
        {
            _busyWorkers--;
            if (_busyWorkers == 0 && Acceptance >= AcceptanceState.Closing)
            {
                WakeAllWorkersLocked();
            }
        }
    }

    /// <summary>Wakes every sleeping worker, ordinary and reserved, to look at the queues and the scheduler's state again.</summary>
    private void WakeAllWorkersLocked()
    {
        Monitor.PulseAll(Gate);
        if (_idleReserved > 0)
        {
            _reservedWake.Release(_idleReserved);
            _idleReserved = 0;
        }
    }

    /// <summary>Counts a worker thread out; true for the last one, which then finishes the scheduler.</summary>
    private bool ExitWorkerLocked()
    {
        WakeAllWorkersLocked();
        return ++_exitedWorkers == _threads.Length && (Mode == PriorityWorkerMode.DedicatedThreads || _activeRunners == 0) && TryMarkFinishedLocked();
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
                    finish = ExitWorkerLocked();
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
                        if (Acceptance >= AcceptanceState.Closing && _activeRunners == 0)
                        {
                            // The reserved workers exit only once no runner is left: let them look again.
                            WakeAllWorkersLocked();
                            finish = _exitedWorkers == _threads.Length && TryMarkFinishedLocked();
                        }

                        break;
                    }

                    _busyWorkers++;
                }

                Execute(worker, lane, item);
                EndItem();
            }
        }

        if (finish)
        {
            Finish();
        }
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
            finishNow = _threads.Length == 0 && _activeRunners == 0 && TryMarkFinishedLocked();
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
