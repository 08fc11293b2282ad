namespace LeaseSimulation.Hosting;

/// <summary>
/// Starves the .NET thread pool while a run goes on: caps its worker threads low and keeps a backlog of work items
/// that block their thread (synchronous calls inside <c>Task.Run</c>, as in seeds 000 and 003), so every other
/// thread-pool item (continuations, timer firings) waits behind them. Dispose restores the pool.
/// </summary>
public sealed class SyncOverAsyncStarvation : IDisposable
{
    private readonly int _originalMaxWorkers;
    private readonly int _originalMaxIo;
    private readonly TimeSpan _blockTime;
    private readonly int _backlog;
    private readonly CancellationTokenSource _stop = new();
    private readonly Thread _feeder;
    private readonly List<Task> _blockers = [];
    private int _pending;
    private bool _disposed;

    private SyncOverAsyncStarvation(int workerCap, int backlog, TimeSpan blockTime)
    {
        ThreadPool.GetMaxThreads(out _originalMaxWorkers, out _originalMaxIo);
        ThreadPool.GetMinThreads(out var minWorkers, out _);
        WorkerCap = Math.Max(workerCap, minWorkers);
        if (!ThreadPool.SetMaxThreads(WorkerCap, _originalMaxIo))
        {
            throw new InvalidOperationException($"Could not cap the thread pool at {WorkerCap} worker threads.");
        }

        _backlog = backlog;
        _blockTime = blockTime;
        _feeder = new Thread(Feed) { IsBackground = true, Name = "Thread-pool starvation feeder" };
        _feeder.Start();
    }

    /// <summary>Gets the worker-thread cap in force.</summary>
    public int WorkerCap { get; }

    /// <summary>Gets how many blocking items have been queued.</summary>
    public int BlockersQueued { get; private set; }

    /// <summary>Starts starving the pool.</summary>
    /// <param name="workerCap">The most worker threads the pool may have (raised to its minimum when lower).</param>
    /// <param name="backlog">How many blocking items to keep queued or running at any time.</param>
    /// <param name="blockTime">How long each blocking item holds its thread (wall-clock time).</param>
    /// <returns>The starvation; dispose it to stop and restore the pool.</returns>
    public static SyncOverAsyncStarvation Start(int workerCap, int backlog, TimeSpan blockTime)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(workerCap, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(backlog, 1);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(blockTime, TimeSpan.Zero);
        return new SyncOverAsyncStarvation(workerCap, backlog, blockTime);
    }

    /// <summary>Stops queuing blocking items, waits for the queued ones to finish and restores the pool's cap.</summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }

        _disposed = true;
        _stop.Cancel();
        _feeder.Join();
        Task[] blockers;
        lock (_blockers)
        {
            blockers = [.. _blockers];
        }

        Task.WaitAll(blockers);
        ThreadPool.SetMaxThreads(_originalMaxWorkers, _originalMaxIo);
        _stop.Dispose();
    }

    private void Feed()
    {
        var token = _stop.Token;
        while (!token.IsCancellationRequested)
        {
            while (Volatile.Read(ref _pending) < _backlog && !token.IsCancellationRequested)
            {
                Interlocked.Increment(ref _pending);
                BlockersQueued++;
                var blocker = Task.Run(Block, CancellationToken.None);
                lock (_blockers)
                {
                    _blockers.RemoveAll(t => t.IsCompleted);
                    _blockers.Add(blocker);
                }
            }

            token.WaitHandle.WaitOne(TimeSpan.FromMilliseconds(1));
        }
    }

    private void Block()
    {
        try
        {
            // A synchronous call that holds the pool thread: the sync-over-async pattern of seeds 000 and 003.
            Thread.Sleep(_blockTime);
        }
        finally
        {
            Interlocked.Decrement(ref _pending);
        }
    }
}
