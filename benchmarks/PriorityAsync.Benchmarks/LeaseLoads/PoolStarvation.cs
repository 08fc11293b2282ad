namespace PriorityAsync.Benchmarks.LeaseLoads;

/// <summary>
/// A thread pool capped at a few threads with blocking work items always waiting in its queue, as a service whose
/// handlers call sync-over-async code starves its pool: everything queued to the pool (the SDK's continuations, its
/// timers, a processor's renewal loops) waits behind the blockers. A dedicated thread tops the blockers up to
/// <c>blockers</c>, each blocking its pool thread for <c>block</c>: counted while they wait in the queue
/// (<c>outstanding</c> false: that many always wait ahead of any other work item, so each of its hops waits about
/// <c>block</c>), or while they wait or run (<c>outstanding</c> true: every thread busy, the queue short; a hop waits
/// for the next blocker to end, a fraction of <c>block</c>).
/// </summary>
internal sealed class PoolStarvation : IDisposable
{
    private readonly int _threads;
    private readonly int _queued;
    private readonly bool _outstanding;
    private readonly TimeSpan _block;
    private readonly Thread _feeder;
    private readonly int _maxWorkers;
    private readonly int _maxIo;
    private int _waiting;
    private volatile bool _stopped;

    public PoolStarvation(int threads, int queued, TimeSpan block, bool outstanding)
    {
        ThreadPool.GetMaxThreads(out _maxWorkers, out _maxIo);
        ThreadPool.SetMinThreads(Math.Min(threads, Environment.ProcessorCount), Math.Min(threads, Environment.ProcessorCount));
        if (!ThreadPool.SetMaxThreads(threads, threads))
        {
            throw new InvalidOperationException($"Could not cap the thread pool at {threads} threads.");
        }

        _threads = threads;
        _queued = queued;
        _outstanding = outstanding;
        _block = block;
        _feeder = new Thread(Feed) { IsBackground = true, Name = "pool-starvation feeder" };
        _feeder.Start();
    }

    public string Describe() => $"thread pool capped at {_threads} threads, {_queued} items blocking {_block.TotalMilliseconds:0} ms always {(_outstanding ? "queued or running" : "waiting in its queue")}";

    public void Dispose()
    {
        _stopped = true;
        _feeder.Join();
        ThreadPool.SetMaxThreads(_maxWorkers, _maxIo);
    }

    private void Feed()
    {
        while (!_stopped)
        {
            while (Volatile.Read(ref _waiting) < _queued)
            {
                Interlocked.Increment(ref _waiting);
                ThreadPool.UnsafeQueueUserWorkItem(
                    static state =>
                    {
                        var self = (PoolStarvation)state!;
                        if (!self._outstanding)
                        {
                            Interlocked.Decrement(ref self._waiting);
                        }

                        Thread.Sleep(self._block);
                        if (self._outstanding)
                        {
                            Interlocked.Decrement(ref self._waiting);
                        }
                    },
                    this);
            }

            Thread.Sleep(5);
        }
    }
}
