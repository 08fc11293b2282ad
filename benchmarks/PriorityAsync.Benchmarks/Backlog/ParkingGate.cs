namespace PriorityAsync.Benchmarks.Backlog;

/// <summary>
/// The handshake of the parked backlog benchmarks: the context's thread parks in <see cref="Park"/> until the
/// benchmark thread's <see cref="RunOnce"/> releases it, does one run, reports it with <see cref="RunFinished"/> and
/// parks again; <see cref="Dispose"/> releases it for good.
/// </summary>
public sealed class ParkingGate : IDisposable
{
    private readonly ManualResetEventSlim _go = new();
    private readonly ManualResetEventSlim _done = new();
    private volatile bool _stopping;

    /// <summary>Blocks the context's thread until the next run; false when the gate is disposed instead.</summary>
    /// <returns>Whether to do a run.</returns>
    public bool Park()
    {
        _go.Wait();
        _go.Reset();
        return !_stopping;
    }

    /// <summary>Tells the benchmark thread that the run is over.</summary>
    public void RunFinished() => _done.Set();

    /// <summary>Releases the parked thread for one run and waits until it is over.</summary>
    public void RunOnce()
    {
        _go.Set();
        _done.Wait();
        _done.Reset();
    }

    /// <summary>Releases the parked thread for good.</summary>
    public void Dispose()
    {
        _stopping = true;
        _go.Set();
    }

    /// <summary>Gets whether the gate has been disposed.</summary>
    public bool IsStopping => _stopping;
}
