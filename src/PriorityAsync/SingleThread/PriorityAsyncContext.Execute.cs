using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

public sealed partial class PriorityAsyncContext
{
    /// <summary>Runs <paramref name="entry"/> in the most urgent lane, on the calling thread, until it completes.</summary>
    /// <param name="entry">The async entry point.</param>
    /// <exception cref="InvalidOperationException">The context has already run an entry point.</exception>
    public void Execute(Func<Task> entry) => Execute(LanePriority.FromRank(0), entry);

    /// <summary>Runs <paramref name="entry"/> in the lane <paramref name="lane"/>, on the calling thread, until it completes.</summary>
    /// <param name="lane">The lane the entry point starts in.</param>
    /// <param name="entry">The async entry point.</param>
    /// <exception cref="InvalidOperationException">The context has already run an entry point.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The context has no lane of that rank.</exception>
    /// <exception cref="ObjectDisposedException">The context has been disposed.</exception>
    [SuppressMessage("Usage", "VSTHRD002:Avoid problematic synchronous waits", Justification = "Execute is the synchronous entry point (like Nito.AsyncEx's AsyncContext.Run): RunToCompletion runs the loop on this thread until the entry task has completed, so GetResult never blocks; it only returns the result or rethrows the exception.")]
    public void Execute(LanePriority lane, Func<Task> entry)
    {
        var start = GetLane(lane, nameof(lane));
        ArgumentNullException.ThrowIfNull(entry);
        RunToCompletion(() => start.RunEntryAsync(entry)).GetAwaiter().GetResult();
    }

    /// <summary>Runs <paramref name="entry"/> in the most urgent lane, on the calling thread, until it completes.</summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="entry">The async entry point.</param>
    /// <returns>The entry point's result.</returns>
    /// <exception cref="InvalidOperationException">The context has already run an entry point.</exception>
    public T Execute<T>(Func<Task<T>> entry) => Execute(LanePriority.FromRank(0), entry);

    /// <summary>Runs <paramref name="entry"/> in the lane <paramref name="lane"/>, on the calling thread, until it completes.</summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="lane">The lane the entry point starts in.</param>
    /// <param name="entry">The async entry point.</param>
    /// <returns>The entry point's result.</returns>
    /// <exception cref="InvalidOperationException">The context has already run an entry point.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The context has no lane of that rank.</exception>
    /// <exception cref="ObjectDisposedException">The context has been disposed.</exception>
    [SuppressMessage("Usage", "VSTHRD002:Avoid problematic synchronous waits", Justification = "Execute is the synchronous entry point (like Nito.AsyncEx's AsyncContext.Run): RunToCompletion runs the loop on this thread until the entry task has completed, so GetResult never blocks; it only returns the result or rethrows the exception.")]
    public T Execute<T>(LanePriority lane, Func<Task<T>> entry)
    {
        var start = GetLane(lane, nameof(lane));
        ArgumentNullException.ThrowIfNull(entry);
        return ((Task<T>)RunToCompletion(() => start.RunEntryAsync(entry))).GetAwaiter().GetResult();
    }
}
