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
