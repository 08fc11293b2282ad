using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    [SuppressMessage("Design", "MA0051:Method is too long", Justification = "A worker loop keeps its searching/parked counting protocol in one place so that the invariants can be read and checked as a whole; splitting it would scatter them across methods.")]
    private void DedicatedWorkerLoop()
    {
        if (OrdinaryWorkerPriority != ThreadPriority.Normal)
        {
            WorkerThreadPriority.ApplyToCurrentThread(OrdinaryWorkerPriority);
        }

        var worker = new SchedulerWorker(this);
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
}
