namespace PriorityAsync.Benchmarks.Throughput;

/// <summary>
/// A batch of short work items: each decrements a shared counter and the last one releases the waiting benchmark
/// thread. The same callback serves every queueing API, so the comparison is of the queues alone.
/// </summary>
public sealed class ShortWorkItem : IDisposable
{
    private readonly ManualResetEventSlim _done = new();
    private int _remaining;

    /// <summary>Gets the callback as a <see cref="SendOrPostCallback"/>; its state is the batch.</summary>
    public static SendOrPostCallback Callback { get; } = static s => ((ShortWorkItem)s!).Complete();

    /// <summary>Gets the callback as an <see cref="Action{T}"/> of the batch.</summary>
    public static Action<ShortWorkItem> ThreadPoolCallback { get; } = static s => s.Complete();

    /// <summary>Gets the callback as an <see cref="Action{T}"/> of <see cref="object"/>, for task factories.</summary>
    public static Action<object?> TaskCallback { get; } = static s => ((ShortWorkItem)s!).Complete();

    /// <summary>Arms the batch for <paramref name="count"/> items.</summary>
    public void Begin(int count)
    {
        _done.Reset();
        Volatile.Write(ref _remaining, count);
    }

    /// <summary>Waits until every item of the batch has run.</summary>
    public void Wait() => _done.Wait();

    /// <inheritdoc />
    public void Dispose() => _done.Dispose();

    private void Complete()
    {
        if (Interlocked.Decrement(ref _remaining) == 0)
        {
            _done.Set();
        }
    }
}
