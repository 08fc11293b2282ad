using System.Collections.Concurrent;

namespace PriorityAsync.Tests.Support;

/// <summary>
/// The tests' own single-thread FIFO context (a minimal UI-thread stand-in): one thread runs what is posted, in order.
/// After <see cref="Dispose"/> the thread ends and <see cref="Post"/> throws, as a closed message loop does.
/// </summary>
internal sealed class FifoThreadContext : SynchronizationContext, IDisposable
{
    private readonly BlockingCollection<(SendOrPostCallback Callback, object? State)> _queue = [];
    private readonly Thread _thread;

    public FifoThreadContext()
    {
        _thread = new Thread(Loop) { IsBackground = true, Name = "fifo host" };
        _thread.Start();
    }

    public int ThreadId => _thread.ManagedThreadId;

    /// <summary>Exceptions thrown by posted callbacks (the host's loop goes on, as a UI loop with a handler would).</summary>
    public ConcurrentQueue<Exception> Errors { get; } = new();

    public override void Post(SendOrPostCallback d, object? state) => _queue.Add((d, state));

    public override void Send(SendOrPostCallback d, object? state) => throw new NotSupportedException();

    public override SynchronizationContext CreateCopy() => this;

    public void Dispose()
    {
        _queue.CompleteAdding();
        _thread.Join();
        _queue.Dispose();
    }

    private void Loop()
    {
        SetSynchronizationContext(this);
        foreach (var (callback, state) in _queue.GetConsumingEnumerable())
        {
            try
            {
                callback(state);
            }
            catch (Exception ex)
            {
                Errors.Enqueue(ex);
            }
        }
    }
}

/// <summary>A context that breaks the host's contract: every post runs on a new thread.</summary>
internal sealed class NewThreadPerPostContext : SynchronizationContext
{
    public ConcurrentQueue<Exception> Errors { get; } = new();

    public override void Post(SendOrPostCallback d, object? state)
    {
        var thread = new Thread(() =>
        {
            try
            {
                d(state);
            }
            catch (Exception ex)
            {
                Errors.Enqueue(ex);
            }
        })
        { IsBackground = true };
        thread.Start();
    }
}
