namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>
    /// Gets how many continuations, posts, tasks and timer firings reached a lane after the scheduler stopped taking
    /// work. Such work is never dropped and never thrown back into the runtime: it runs on the .NET thread pool,
    /// without a synchronization context, so the code awaiting it resumes.
    /// </summary>
    public long RejectedWorkCount => Interlocked.Read(ref _rejectedWork);

    /// <summary>Raises <see cref="UnhandledException"/>; an exception of a handler is ignored.</summary>
    internal void RaiseUnhandledException(Lane lane, Exception exception)
    {
        try
        {
            UnhandledException?.Invoke(this, new SchedulerExceptionEventArgs(lane, exception));
        }
        catch (Exception)
        {
            // A handler that throws has nowhere to report to; the event says handlers must not throw.
        }
    }

    /// <summary>
    /// Rejects (see <see cref="RejectedWork"/>) every item still queued once the scheduler has finished: an enqueue
    /// that raced with the finish. Called by the finisher after it marked the scheduler finished, and by such an enqueue.
    /// </summary>
    private protected void RejectStragglers()
    {
        while (TryDequeue(null, AllLanes, out var item, out var lane))
        {
            Reject(lane, item);
        }
    }

    /// <summary>Raises <see cref="RejectedWork"/>; an exception of a handler is ignored.</summary>
    internal void RaiseRejectedWork(Lane lane, RejectedWorkKind kind)
    {
        try
        {
            RejectedWork?.Invoke(this, new RejectedWorkEventArgs(lane, kind));
        }
        catch (Exception)
        {
            // The event says handlers must not throw; the work still runs.
        }
    }

    /// <summary>Counts work that arrived after the scheduler stopped and runs it on the thread pool.</summary>
    private void Reject(Lane lane, in LaneWorkItem item)
    {
        Interlocked.Increment(ref _rejectedWork);
        if (PriorityAsyncMetrics.Rejected.Enabled)
        {
            var tags = PriorityAsyncMetrics.Tags(lane);
            tags.Add(PriorityAsyncMetrics.KindTag, PriorityAsyncMetrics.KindName(item.Kind));
            PriorityAsyncMetrics.Rejected.Add(1, tags);
        }

        ThreadPool.UnsafeQueueUserWorkItem(static w => w.Run(), new RejectedLaneWork(lane, item), preferLocal: false);
    }
}
