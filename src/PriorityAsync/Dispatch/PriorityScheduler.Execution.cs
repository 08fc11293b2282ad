namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>Reports an exception thrown by a posted callback (not a task) that ran in <paramref name="lane"/>.</summary>
    private protected abstract void OnCallbackException(Lane lane, Exception exception);

    /// <summary>
    /// Runs one dequeued item on the calling worker thread in its lane, with the lane's synchronization context
    /// current. The context is left installed afterwards; callers restore it with <see cref="SchedulerWorker.LeaveLaneContext"/>.
    /// </summary>
    private protected void Execute(SchedulerWorker worker, Lane lane, in LaneWorkItem item)
    {
        worker.CurrentLane = lane;
        worker.EnterLaneContext(lane);
        var alarms = worker.HasSliceAlarms;
        var timed = alarms || PriorityAsyncMetrics.SliceDuration.Enabled || PriorityAsyncMetrics.WaitDuration.Enabled;
        var start = timed ? _clock.GetTimestamp() : 0;
        if (timed && item.EnqueuedAt != LaneWorkItem.NoTimestamp && PriorityAsyncMetrics.WaitDuration.Enabled)
        {
            PriorityAsyncMetrics.WaitDuration.Record(_clock.GetElapsedTime(item.EnqueuedAt, start).TotalSeconds, PriorityAsyncMetrics.Tags(lane));
        }

        if (alarms)
        {
            worker.BeginSlice(start);
        }

        try
        {
            item.Invoke(lane);
        }
        catch (Exception ex)
        {
            OnCallbackException(lane, ex);
        }
        finally
        {
            var stallCounted = alarms && worker.EndSlice();
            if (timed)
            {
                EndTimedSlice(lane, _clock.GetElapsedTime(start), stallCounted);
            }

            // The lane's context stays installed for the next item (see SchedulerWorker.EnterLaneContext); the loops
            // restore the thread's own before they wait, advance virtual time or exit. In between, dequeuing runs no
            // user code but the clock's GetTimestamp (with starvation bounds) and metric listeners.
            worker.CurrentLane = null;
        }
    }
}
