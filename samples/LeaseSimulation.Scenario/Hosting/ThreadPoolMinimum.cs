namespace LeaseSimulation.Hosting;

/// <summary>
/// Raises the .NET thread pool's minimum worker-thread count for a run, so it creates threads on demand without its
/// wall-clock injection delay; dispose restores the previous minimum.
/// </summary>
public sealed class ThreadPoolMinimum : IDisposable
{
    private readonly int _previousWorkers;
    private readonly int _previousIo;
    private bool _disposed;

    private ThreadPoolMinimum(int workers)
    {
        ThreadPool.GetMinThreads(out _previousWorkers, out _previousIo);
        ThreadPool.GetMaxThreads(out var maxWorkers, out _);
        Workers = Math.Min(Math.Max(workers, _previousWorkers), maxWorkers);
        if (!ThreadPool.SetMinThreads(Workers, _previousIo))
        {
            throw new InvalidOperationException($"Could not raise the thread pool's minimum to {Workers} worker threads.");
        }
    }

    /// <summary>Gets the minimum in force.</summary>
    public int Workers { get; }

    /// <summary>Raises the minimum to <paramref name="workers"/> (never lowers it).</summary>
    /// <param name="workers">The minimum worker-thread count.</param>
    /// <returns>The change; dispose it to restore the previous minimum.</returns>
    public static ThreadPoolMinimum Raise(int workers)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(workers, 1);
        return new ThreadPoolMinimum(workers);
    }

    /// <summary>Restores the previous minimum.</summary>
    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            ThreadPool.SetMinThreads(_previousWorkers, _previousIo);
        }
    }
}
