using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
    [SuppressMessage("Design", "MA0051:Method is too long", Justification = "A worker loop keeps its searching/parked counting protocol in one place so that the invariants can be read and checked as a whole; splitting it would scatter them across methods.")]
    private void ThreadPoolRunner()
    {
        SchedulerWorker worker;
        lock (Gate)
        {
            worker = _spareWorkers.Count > 0 ? _spareWorkers.Pop() : new SchedulerWorker(this);
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
                if (IsReady(AllLanes) && Acceptance < AcceptanceState.Closing && TryClaimRunnerSlot())
                {
                    continue; // work landed after the last look, and this runner may take it
                }

                if (Acceptance >= AcceptanceState.Closing)
                {
                    if (!AreLanesEmpty() && TryClaimRunnerSlot())
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
}
