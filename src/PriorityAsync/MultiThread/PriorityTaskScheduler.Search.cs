namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
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
