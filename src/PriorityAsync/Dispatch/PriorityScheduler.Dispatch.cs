using System.Runtime.ExceptionServices;

namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>The <c>rank</c> passed to <see cref="OnWorkAvailable"/> when no particular lane got work.</summary>
    private protected const int AnyLane = -1;

    /// <summary>The lane mask that allows every lane.</summary>
    private protected const int AllLanes = LaneQueues.AllLanes;

    private bool NeedsEnqueueTimestamp => _queues.HasStarvationBounds || PriorityAsyncMetrics.WaitDuration.Enabled;

    /// <summary>
    /// Queues a task, continuation or callback into <paramref name="lane"/>. Never throws: this is how the runtime
    /// delivers continuations, so work that arrives after the scheduler stopped is rejected (see <see cref="RejectedWork"/>).
    /// Takes no lock: the item goes into the lane's lock-free queue, then the derived scheduler wakes a worker if none
    /// is awake to find it.
    /// </summary>
    internal void Enqueue(Lane lane, object callback, object? state)
    {
        if (!Lifetime.AcceptsQueuedWorkFromCallingThread)
        {
            Reject(lane, new LaneWorkItem(callback, state, LaneWorkItem.NoTimestamp));
            return;
        }

        var timestamp = NeedsEnqueueTimestamp ? _clock.GetTimestamp() : LaneWorkItem.NoTimestamp;
        var rank = lane.Priority.Rank;
        _queues.Add(rank, new LaneWorkItem(callback, state, timestamp));
        if (Lifetime.HasFinished)
        {
            // The scheduler finished while the item landed: no worker is left to run it. The finisher and this thread
            // both rescue what they find (each item is taken once), so it is rejected rather than stranded.
            RejectStragglers();
            return;
        }

        OnWorkAvailable(rank);
    }

    /// <summary>
    /// Called, without the lock, after an item was queued into the lane of rank <paramref name="rank"/>, or with
    /// <see cref="AnyLane"/> after the scheduler's state changed (an operation completed): wake a worker if needed.
    /// </summary>
    private protected abstract void OnWorkAvailable(int rank);

    /// <summary>Takes the next item of any lane by the dispatch rule for <paramref name="worker"/>. Lock-free; safe from several workers at once.</summary>
    private protected bool TryDequeue(SchedulerWorker worker, out LaneWorkItem item, out Lane lane) => TryDequeue(worker, AllLanes, out item, out lane);

    /// <summary>
    /// Takes the next item of the lanes in <paramref name="allowedLanes"/> by the dispatch rule. Lock-free. The
    /// dispatch is counted for <paramref name="worker"/> (not at all without one: a rejected straggler).
    /// </summary>
    private protected bool TryDequeue(SchedulerWorker? worker, int allowedLanes, out LaneWorkItem item, out Lane lane)
    {
        if (!_queues.TryTake(allowedLanes, out item, out var rank))
        {
            lane = null!;
            return false;
        }

        lane = _lanes[rank];
        worker?.CountDispatched(rank);
        return true;
    }

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

    /// <summary>Gets whether any lane in <paramref name="laneMask"/> has a ready item (one volatile read).</summary>
    internal bool IsReady(int laneMask) => _queues.IsReady(laneMask);

    internal int GetQueueLength(Lane lane) => _queues.Count(lane.Priority.Rank);

    internal IEnumerable<Task> GetScheduledTasks(Lane lane) => _queues.GetScheduledTasks(lane.Priority.Rank);

    /// <summary>Gets whether every lane is empty.</summary>
    private protected bool AreLanesEmpty() => _queues.IsEmpty;

    /// <summary>Runs <paramref name="callback"/> in <paramref name="lane"/> and blocks the calling (outside) thread until it has run.</summary>
    internal void SendFromOutside(Lane lane, SendOrPostCallback callback, object? state)
    {
        using var done = new ManualResetEventSlim();
        ExceptionDispatchInfo? failure = null;
        Enqueue(
            lane,
            (SendOrPostCallback)(_ =>
            {
                try
                {
                    callback(state);
                }
                catch (Exception ex)
                {
                    failure = ExceptionDispatchInfo.Capture(ex);
                }
                finally
                {
                    done.Set();
                }
            }),
            null);
        done.Wait();
        failure?.Throw();
    }

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

    /// <summary>
    /// Reports a slice that is still running past <see cref="StallThreshold"/>: counts the stall and raises
    /// <see cref="StallInProgress"/>. Runs on the clock's timer thread.
    /// </summary>
    internal void ReportStallInProgress(Lane lane, TimeSpan elapsed)
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
