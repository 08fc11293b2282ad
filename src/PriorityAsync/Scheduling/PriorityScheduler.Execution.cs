using System.Diagnostics;

namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>
    /// Gets whether the item running on the calling thread should yield: a more urgent lane of this scheduler has
    /// ready work, or the slice has run longer than <see cref="YieldQuantum"/>. No lock and no clock: one thread-static
    /// lookup of the calling worker, then a few field reads. Always <see langword="false"/> on a thread that is not
    /// running this scheduler's work. In a tight loop that knows its lane, <see cref="Lane.HasMoreUrgentWork"/> is
    /// cheaper (it ignores the quantum).
    /// </summary>
    public bool ShouldYield
    {
        get
        {
            var worker = t_worker;
            return worker is not null
                && ReferenceEquals(worker.Scheduler, this)
                && worker.CurrentLane is { } lane
                && (lane.HasMoreUrgentWork || worker.QuantumExpired);
        }
    }

    /// <summary>Reports an exception thrown by a posted callback (not a task) that ran in <paramref name="lane"/>.</summary>
    private protected abstract void OnCallbackException(Lane lane, Exception exception);

    /// <summary>
    /// Runs one dequeued item on the calling worker thread in its lane, with the lane's synchronization context
    /// current. The context is left installed afterwards; callers restore it with <see cref="Worker.LeaveLaneContext"/>.
    /// </summary>
    private protected void Execute(Worker worker, Lane lane, in WorkItem item)
    {
        worker.CurrentLane = lane;
        worker.EnterLaneContext(lane);
        var alarms = worker.HasSliceAlarms;
        var timed = alarms || PriorityAsyncMetrics.SliceDuration.Enabled || PriorityAsyncMetrics.WaitDuration.Enabled;
        var start = timed ? _clock.GetTimestamp() : 0;
        if (timed && item.EnqueuedAt != WorkItem.NoTimestamp && PriorityAsyncMetrics.WaitDuration.Enabled)
        {
            PriorityAsyncMetrics.WaitDuration.Record(_clock.GetElapsedTime(item.EnqueuedAt, start).TotalSeconds, PriorityAsyncMetrics.Tags(lane));
        }

        if (alarms)
        {
            worker.BeginSlice(start);
        }

        try
        {
            // Continuations and posts first: Action and SendOrPostCallback are sealed, so each test is one compare.
            switch (item.Callback)
            {
                case Action action:
                    action();
                    break;
                case SendOrPostCallback callback:
                    callback(item.State);
                    break;
                case Task task:
                    ((LaneTaskScheduler)lane.TaskScheduler).RunTask(task);
                    break;
                case TimerCallback timerCallback:
                    timerCallback(item.State);
                    break;
                default:
                    throw new UnreachableException($"Unknown work item type {item.Callback.GetType()}.");
            }
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


            // The lane's context stays installed for the next item (see Worker.EnterLaneContext); the loops restore
            // the thread's own before they wait, advance virtual time or exit. In between, dequeuing runs no user
            // code but the clock's GetTimestamp (with starvation bounds) and metric listeners.
            worker.CurrentLane = null;
        }
    }

    /// <summary>
    /// Reports a slice that is still running past <see cref="StallThreshold"/>: counts the stall and raises
    /// <see cref="StallInProgress"/>. Runs on the clock's timer thread.
    /// </summary>
    private void ReportStallInProgress(Lane lane, TimeSpan elapsed)
    {
        if (PriorityAsyncMetrics.Stalls.Enabled)
        {
            PriorityAsyncMetrics.Stalls.Add(1, PriorityAsyncMetrics.Tags(lane));
        }

        try
        {
            StallInProgress?.Invoke(this, new StallDetectedEventArgs(lane, elapsed));
        }
        catch (Exception)
        {
            // Raised on the timer thread: a handler's exception has nowhere to go, and the event says handlers must not throw.
        }
    }

    private void EndTimedSlice(Lane lane, TimeSpan duration, bool stallCounted)
    {
        if (PriorityAsyncMetrics.SliceDuration.Enabled)
        {
            PriorityAsyncMetrics.SliceDuration.Record(duration.TotalSeconds, PriorityAsyncMetrics.Tags(lane));
        }

        if (StallThreshold is { } threshold && duration >= threshold)
        {
            if (!stallCounted && PriorityAsyncMetrics.Stalls.Enabled)
            {
                PriorityAsyncMetrics.Stalls.Add(1, PriorityAsyncMetrics.Tags(lane));
            }

            try
            {
                StallDetected?.Invoke(this, new StallDetectedEventArgs(lane, duration));
            }
            catch (Exception ex)
            {
                OnCallbackException(lane, ex);
            }
        }
    }
}
