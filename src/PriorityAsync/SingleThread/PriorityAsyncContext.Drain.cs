using System.Diagnostics;

namespace PriorityAsync;

public sealed partial class PriorityAsyncContext
{
    /// <inheritdoc />
    private protected override bool TakesOwnWorkWhileClosing => _drainTakesOwnWork;

    /// <summary>
    /// Ends the run: takes no more work from other threads, runs what is already queued (so no task or continuation
    /// waits forever behind the end or behind a failure) together with what those items queue from this thread, then
    /// closes; what arrives later, or from another thread, is rejected to the thread pool.
    /// </summary>
    /// <remarks>
    /// Work the run's own items post (a continuation after <c>await Task.Yield()</c>, a <c>Post</c>) stays on this
    /// thread, as it would in Nito.AsyncEx: code written for one thread never runs on two. An item that re-posts itself
    /// forever is the program's own loop; it is bounded by <see cref="PriorityScheduler.ShutdownTimeout"/>, measured on
    /// the real clock from the start of the drain (a virtual clock stands still meanwhile): after it, this thread's
    /// posts are rejected like any late work, what is queued still runs, and the run returns.
    /// </remarks>
    private void DrainAndClose(SchedulerWorker worker)
    {
        lock (Gate)
        {
            _drainTakesOwnWork = ShutdownTimeout != TimeSpan.Zero;
            Acceptance = AcceptanceState.Closing;
        }

        var bound = ShutdownTimeout;
        var start = Stopwatch.GetTimestamp();
        while (TryDequeue(worker, out var item, out var lane))
        {
            Execute(worker, lane, item);
            if (_drainTakesOwnWork && bound != Timeout.InfiniteTimeSpan && Stopwatch.GetElapsedTime(start) >= bound)
            {
                // The items still queued run; from now on this thread's posts are late work too.
                _drainTakesOwnWork = false;
            }
        }

        lock (Gate)
        {
            _drainTakesOwnWork = false;
            Acceptance = AcceptanceState.Closed;
        }

        // An enqueue that raced with the close either sees it and rejects its item itself, or left it here.
        RejectStragglers();
    }
}
