namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    private long _rejectedWork;

    /// <summary>
    /// Raised, on a thread-pool thread and before the work runs there, for each continuation, post, task or timer
    /// firing that reached a lane after the scheduler stopped taking work (see <see cref="RejectedWorkCount"/>).
    /// Handlers must not throw; an exception they throw is ignored.
    /// </summary>
    public event EventHandler<RejectedWorkEventArgs>? RejectedWork;

    /// <summary>
    /// Raised when work with no task to carry its exception throws: a posted callback or continuation (for example an
    /// async void method) of a <see cref="PriorityTaskScheduler"/>, and on any scheduler such work that ran on the
    /// thread pool after it was rejected. A <see cref="PriorityAsyncContext"/> does not raise it for work it runs
    /// itself: there the exception ends the run. Handlers must not block or throw; an exception they throw is ignored.
    /// </summary>
    public event EventHandler<SchedulerExceptionEventArgs>? UnhandledException;

    /// <summary>
    /// Gets how many continuations, posts, tasks and timer firings reached a lane after the scheduler stopped taking
    /// work. Such work is never dropped and never thrown back into the runtime: it runs on the .NET thread pool,
    /// without a synchronization context, so the code awaiting it resumes.
    /// </summary>
    public long RejectedWorkCount => Interlocked.Read(ref _rejectedWork);

    /// <summary>Raises <see cref="UnhandledException"/>; an exception of a handler is ignored.</summary>
    private protected void RaiseUnhandledException(Lane lane, Exception exception)
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

    /// <summary>Raises <see cref="RejectedWork"/>; an exception of a handler is ignored.</summary>
    private void RaiseRejectedWork(Lane lane, RejectedWorkKind kind)
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
    private void Reject(Lane lane, object callback, object? state)
    {
        Interlocked.Increment(ref _rejectedWork);
        var kind = callback switch
        {
            Action => RejectedWorkKind.Continuation,
            SendOrPostCallback => RejectedWorkKind.Post,
            Task => RejectedWorkKind.Task,
            _ => RejectedWorkKind.TimerCallback,
        };
        if (PriorityAsyncMetrics.Rejected.Enabled)
        {
            var tags = PriorityAsyncMetrics.Tags(lane);
            tags.Add(PriorityAsyncMetrics.KindTag, PriorityAsyncMetrics.KindName(kind));
            PriorityAsyncMetrics.Rejected.Add(1, tags);
        }

        ThreadPool.UnsafeQueueUserWorkItem(static w => w.Run(), new RejectedItem(lane, kind, callback, state), preferLocal: false);
    }

    /// <summary>One rejected item on its way to the thread pool.</summary>
    private sealed class RejectedItem(Lane lane, RejectedWorkKind kind, object callback, object? state)
    {
        public void Run()
        {
            var scheduler = lane.Scheduler;
            scheduler.RaiseRejectedWork(lane, kind);
            try
            {
                switch (callback)
                {
                    case Action action:
                        action();
                        break;
                    case SendOrPostCallback post:
                        post(state);
                        break;
                    case Task task:
                        ((LaneTaskScheduler)lane.TaskScheduler).RunTask(task);
                        break;
                    case TimerCallback timer:
                        timer(state);
                        break;
                }
            }
            catch (Exception ex)
            {
                scheduler.RaiseUnhandledException(lane, ex);
            }
        }
    }
}
