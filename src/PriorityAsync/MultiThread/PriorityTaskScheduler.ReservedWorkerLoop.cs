namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    /// <summary>
    /// The loop of a reserved worker: it takes only items of the reserved lanes, never spins, and sleeps on its own
    /// semaphore, so a wake-up meant for an ordinary worker never lands on it (and is never lost).
    /// </summary>
    private void ReservedWorkerLoop()
    {
        var worker = new SchedulerWorker(this);
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
}
