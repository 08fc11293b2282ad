namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
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
}
