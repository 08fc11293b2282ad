namespace PriorityAsync;

public sealed partial class PriorityAsyncContext
{
    /// <inheritdoc />
    private protected override void OnWorkAvailable(int rank)
    {
        if (Volatile.Read(ref _parked) != 0)
        {
            lock (Gate)
            {
                Monitor.Pulse(Gate);
            }
        }
    }

    private bool IsRunOver => _entryCompleted && OutstandingOperations == 0;

    private void RunLoop(SchedulerWorker worker)
    {
        while (true)
        {
            if (TryDequeue(worker, out var item, out var lane))
            {
                Execute(worker, lane, item);
                if (_failure is not null || IsRunOver)
                {
                    // Checked after every item, not only when the lanes are empty: threads that keep posting must not
                    // keep a finished run alive. What is queued runs; what arrives from now on is rejected.
                    DrainAndClose(worker);
                    _failure?.Throw();
                    return;
                }

                continue;
            }

            if (IsRunOver)
            {
                DrainAndClose(worker);
                _failure?.Throw();
                return;
            }

            worker.LeaveLaneContext();
            if (_virtualClock?.NextTimerDue is not null)
            {
                _virtualClock.TryAdvanceToNextTimer();
                continue;
            }

            Park();
        }
    }

    /// <summary>Sleeps until an enqueue, the end of the entry point or of an operation pulses the thread.</summary>
    private void Park()
    {
        lock (Gate)
        {
            Interlocked.Exchange(ref _parked, 1);
            if (!IsReady(AllLanes) && !IsRunOver && _virtualClock?.NextTimerDue is null)
            {
                Monitor.Wait(Gate);
            }

            Volatile.Write(ref _parked, 0);
        }
    }
}
