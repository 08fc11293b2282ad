namespace PriorityAsync;

/// <summary>
/// Bookkeeping that runs the moment a task completes: on the thread that completes it and on the default scheduler,
/// never in a lane, so counting a run out or noticing the end of an entry point does not wait behind the lanes' work.
/// </summary>
internal static class SynchronousContinuation
{
    /// <summary>Runs <paramref name="action"/> with <paramref name="state"/> when <paramref name="task"/> completes, however it ends.</summary>
    /// <param name="task">The task to follow.</param>
    /// <param name="action">The bookkeeping; short, and it must not throw.</param>
    /// <param name="state">What <paramref name="action"/> needs (a static lambda and its state allocate nothing more).</param>
    public static void Attach(Task task, Action<Task, object?> action, object? state) =>
        _ = task.ContinueWith(action, state, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
}
