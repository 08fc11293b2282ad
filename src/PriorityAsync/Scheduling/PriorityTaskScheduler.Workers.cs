using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    /// <summary>How many times a worker that ran out of work looks again before it parks (about 10–50 µs).</summary>
    private const int SearchSpins = 64;

    /// <inheritdoc />
    /// <remarks>
    /// Wakes a worker only when none is already awake and searching: in a burst, the worker that is looking takes the
    /// items one after another, and a second one is woken by the first when it sees more work behind its own item.
    /// Lease work that finds every ordinary worker busy wakes a reserved worker.
    /// </remarks>
    private protected override void OnWorkAvailable(int rank)
    {
        if (rank != AnyLane && rank <= ReservedLane.Rank && Volatile.Read(ref _idleReserved) > 0
            && (Mode == PriorityWorkerMode.ThreadPool || Volatile.Read(ref _searchingWorkers) + Volatile.Read(ref _parkedWorkers) == 0))
        {
            WakeReservedWorker();
        }

        if (Volatile.Read(ref _searchingWorkers) > 0)
        {
            return;
        }

        if (Mode == PriorityWorkerMode.DedicatedThreads)
        {
            WakeParkedWorker();
        }
        else
        {
            TryStartRunner();
        }
    }

    private void WakeParkedWorker()
    {
        if (Volatile.Read(ref _parkedWorkers) == 0)
        {
            return;
        }

        lock (Gate)
        {
            if (_parkedWorkers > _pendingWakes)
            {
                _pendingWakes++;
                Interlocked.Increment(ref _searchingWorkers); // counts as searching from now: later posts wake no one
                Monitor.Pulse(Gate);
            }
        }
    }

    private void WakeReservedWorker()
    {
        lock (Gate)
        {
            if (_idleReserved > 0)
            {
                // The waker claims the worker, so two items never count on the same one.
                Volatile.Write(ref _idleReserved, _idleReserved - 1);
                _reservedWake.Release();
            }
        }
    }

    /// <summary>Starts a thread-pool runner unless <see cref="PriorityTaskSchedulerOptions.WorkerCount"/> are active.</summary>
    private bool TryStartRunner()
    {
        var active = Volatile.Read(ref _activeRunners);
        while (active < WorkerCount)
        {
            var seen = Interlocked.CompareExchange(ref _activeRunners, active + 1, active);
            if (seen == active)
            {
                ThreadPool.UnsafeQueueUserWorkItem(static s => ((PriorityTaskScheduler)s!).ThreadPoolRunner(), this);
                return true;
            }

            active = seen;
        }

        return false;
    }

    /// <summary>
    /// After taking an item, wakes another worker when more work waits and nobody is looking for it. Lease work left
    /// behind wakes an idle reserved worker even when an ordinary worker is searching: the poster may have counted on
    /// this worker while it was still searching, and it is about to run a slice instead.
    /// </summary>
    private void ShareRemainingWork()
    {
        if (Volatile.Read(ref _idleReserved) > 0 && IsReady(_reservedLanes))
        {
            WakeReservedWorker();
        }

        if (IsReady(AllLanes) && Volatile.Read(ref _searchingWorkers) == 0)
        {
            if (Mode == PriorityWorkerMode.DedicatedThreads)
            {
                WakeParkedWorker();
            }
            else
            {
                TryStartRunner();
            }
        }
    }

    /// <summary>Looks for work for a while without sleeping; true when some is ready.</summary>
    private bool Search()
    {
        var spinner = default(SpinWait);
        for (var i = 0; i < SearchSpins; i++)
        {
            if (IsReady(AllLanes) || Acceptance >= AcceptanceState.Closing)
            {
                return true;
            }

            spinner.SpinOnce(sleep1Threshold: -1);
        }

        return IsReady(AllLanes);
    }

    [SuppressMessage("Design", "MA0051:Method is too long", Justification = "A worker loop keeps its searching/parked counting protocol in one place so that the invariants can be read and checked as a whole; splitting it would scatter them across methods.")]
    private void DedicatedWorkerLoop()
    {
        if (OrdinaryWorkerPriority != ThreadPriority.Normal)
        {
            WorkerThreadPriority.ApplyToCurrentThread(OrdinaryWorkerPriority);
        }

        var worker = new Worker(this);
        var finish = false;
        var searching = false;
        using (EnterWorker(worker))
        {
            while (true)
            {
                if (TryDequeue(worker, out var item, out var lane))
                {
                    if (searching)
                    {
                        searching = false;
                        Interlocked.Decrement(ref _searchingWorkers);
                    }

                    ShareRemainingWork();
                    Execute(worker, lane, item);
                    continue;
                }

                worker.LeaveLaneContext();
                if (Acceptance >= AcceptanceState.Closing && AreLanesEmpty())
                {
                    if (searching)
                    {
                        Interlocked.Decrement(ref _searchingWorkers);
                    }

                    lock (Gate)
                    {
                        finish = ExitWorkerLocked();
                    }

                    break;
                }

                if (!searching)
                {
                    searching = true;
                    Interlocked.Increment(ref _searchingWorkers);
                    if (Search())
                    {
                        continue;
                    }
                }

                searching = false;
                Interlocked.Decrement(ref _searchingWorkers);
                Park();
                searching = true; // a waker counted this worker as searching (or a close woke it: it looks once more)
            }
        }

        worker.Dispose();
        if (finish)
        {
            // Outside the lock: Finish joins the timer thread, which may be waiting for the lock to enqueue a firing.
            Finish();
        }
    }

    /// <summary>Sleeps in <see cref="PriorityScheduler.Gate"/> until a waker pulses, unless work or a close is already there.</summary>
    private void Park()
    {
        lock (Gate)
        {
            Interlocked.Increment(ref _parkedWorkers);
            if (IsReady(AllLanes) || Acceptance >= AcceptanceState.Closing)
            {
                Interlocked.Decrement(ref _parkedWorkers);
                Interlocked.Increment(ref _searchingWorkers);
                return;
            }

            Monitor.Wait(Gate);
            Interlocked.Decrement(ref _parkedWorkers);
            if (_pendingWakes > 0)
            {
                _pendingWakes--; // the waker already counted this worker as searching
            }
            else
            {
                Interlocked.Increment(ref _searchingWorkers); // woken by a close
            }
        }
    }

    /// <summary>
    /// The loop of a reserved worker: it takes only items of the reserved lanes, never spins, and sleeps on its own
    /// semaphore, so a wake-up meant for an ordinary worker never lands on it (and is never lost).
    /// </summary>
    private void ReservedWorkerLoop()
    {
        var worker = new Worker(this);
        var finish = false;
        using (EnterWorker(worker))
        {
            while (true)
            {
                if (TryDequeue(worker, _reservedLanes, out var item, out var lane))
                {
                    Execute(worker, lane, item);
                    continue;
                }

                worker.LeaveLaneContext();
                if (Acceptance >= AcceptanceState.Closing && AreLanesEmpty())
                {
                    lock (Gate)
                    {
                        finish = ExitWorkerLocked();
                    }

                    break;
                }

                lock (Gate)
                {
                    Interlocked.Increment(ref _idleReserved);
                    if (IsReady(_reservedLanes) || Acceptance >= AcceptanceState.Closing)
                    {
                        Interlocked.Decrement(ref _idleReserved);
                        continue;
                    }
                }

                _reservedWake.Wait();
            }
        }

        worker.Dispose();
        if (finish)
        {
            Finish();
        }
    }

    /// <summary>Wakes every sleeping worker, ordinary and reserved, to look at the queues and the scheduler's state again.</summary>
    private void WakeAllWorkersLocked()
    {
        Monitor.PulseAll(Gate);
        if (_idleReserved > 0)
        {
            _reservedWake.Release(_idleReserved);
            Volatile.Write(ref _idleReserved, 0);
        }
    }

    /// <summary>Counts a worker thread out; true for the last one, which then finishes the scheduler.</summary>
    private bool ExitWorkerLocked()
    {
        WakeAllWorkersLocked();
        return ++_exitedWorkers == _threads.Length && Volatile.Read(ref _activeRunners) == 0 && TryMarkFinishedLocked();
    }

    [SuppressMessage("Design", "MA0051:Method is too long", Justification = "A worker loop keeps its searching/parked counting protocol in one place so that the invariants can be read and checked as a whole; splitting it would scatter them across methods.")]
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
                if (TryDequeue(worker, out var item, out var lane))
                {
                    ShareRemainingWork();
                    Execute(worker, lane, item);
                    continue;
                }

                Interlocked.Increment(ref _searchingWorkers);
                var found = Acceptance < AcceptanceState.Closing && Search();
                Interlocked.Decrement(ref _searchingWorkers);
                if (found)
                {
                    continue;
                }

                Interlocked.Decrement(ref _activeRunners);
                if (IsReady(AllLanes) && Acceptance < AcceptanceState.Closing && TryRejoin())
                {
                    continue; // work landed after the last look, and this runner may take it
                }

                if (Acceptance >= AcceptanceState.Closing)
                {
                    if (!AreLanesEmpty() && TryRejoin())
                    {
                        continue;
                    }

                    lock (Gate)
                    {
                        // The reserved workers exit only once no runner is left: let them look again.
                        WakeAllWorkersLocked();
                        finish = Volatile.Read(ref _activeRunners) == 0 && _exitedWorkers == _threads.Length && TryMarkFinishedLocked();
                    }
                }

                break;
            }

            worker.LeaveLaneContext();
        }

        // The worker goes back to the spares for the next runner, unless the scheduler has finished: once finished,
        // no runner will take it, and Finish, which disposes the spares, may already have looked (another runner or a
        // reserved worker can finish the scheduler between this runner counting itself out and this point). So it
        // is disposed here, with its slice alarms, which are timers on the scheduler's clock.
        bool spare;
        lock (Gate)
        {
            spare = !_finished;
            if (spare)
            {
                _spareWorkers.Push(worker);
            }
        }

        if (!spare)
        {
            worker.Dispose();
        }

        if (finish)
        {
            Finish();
        }
    }

    /// <summary>Counts the calling runner as active again, unless the runner limit was reached meanwhile.</summary>
    private bool TryRejoin()
    {
        var active = Volatile.Read(ref _activeRunners);
        while (active < WorkerCount)
        {
            var seen = Interlocked.CompareExchange(ref _activeRunners, active + 1, active);
            if (seen == active)
            {
                return true;
            }

            active = seen;
        }

        return false;
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
