namespace PriorityAsync.Benchmarks.Dispatch;

/// <summary>
/// The thread-pool counterpart of <see cref="PostChain"/>: one reusable work item re-queues itself
/// (<see cref="ThreadPool.UnsafeQueueUserWorkItem(IThreadPoolWorkItem, bool)"/>, the pool's cheapest path, to the
/// worker's local queue), so one <see cref="Run"/> is <see cref="Length"/> dispatches and allocates nothing.
/// </summary>
public sealed class ThreadPoolChain : IThreadPoolWorkItem, IDisposable
{
    private readonly ManualResetEventSlim _done = new();
    private int _remaining;

    /// <summary>Creates a chain of <paramref name="length"/> dispatches.</summary>
    public ThreadPoolChain(int length) => Length = length;

    /// <summary>Gets the number of dispatches one run performs.</summary>
    public int Length { get; }

    /// <summary>Runs the chain and waits until its last item has run.</summary>
    public void Run()
    {
        _remaining = Length;
        _done.Reset();
        ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        _done.Wait();
    }

    /// <inheritdoc />
    public void Execute()
    {
        if (--_remaining == 0)
        {
            _done.Set();
            return;
        }

        ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: true);
    }

    /// <inheritdoc />
    public void Dispose() => _done.Dispose();
}
