namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
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

        WakeOrdinaryWorker();
    }

    /// <summary>Wakes a parked dedicated worker, or starts a thread-pool runner, to look for work.</summary>
    private void WakeOrdinaryWorker()
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
            WakeOrdinaryWorker();
        }
    }

    /// <summary>Starts a thread-pool runner unless <see cref="PriorityTaskSchedulerOptions.WorkerCount"/> are active.</summary>
    private bool TryStartRunner()
    {
        if (!TryClaimRunnerSlot())
        {
            return false;
        }

        ThreadPool.UnsafeQueueUserWorkItem(static s => ((PriorityTaskScheduler)s!).ThreadPoolRunner(), this);
        return true;
    }

    /// <summary>
    /// Counts one more runner as active unless <see cref="PriorityTaskSchedulerOptions.WorkerCount"/> already are: for
    /// a runner about to start, and for a runner that counted itself out and found work after all.
    /// </summary>
    private bool TryClaimRunnerSlot()
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
}
