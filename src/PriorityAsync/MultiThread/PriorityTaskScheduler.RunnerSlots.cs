namespace PriorityAsync;

public sealed partial class PriorityTaskScheduler
{
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
