namespace PriorityAsync.Benchmarks.Dispatch;

/// <summary>
/// A chain of posts on one single-thread context: each callback posts the next one, so one <see cref="Run"/> is
/// <see cref="Length"/> post-and-run dispatches on the context's thread, with one cross-thread wake-up at each end.
/// </summary>
public sealed class PostChain : IDisposable
{
    private static readonly SendOrPostCallback s_step = static s => ((PostChain)s!).Step();

    private readonly SynchronizationContext _context;
    private readonly ManualResetEventSlim _done = new();
    private int _remaining;

    /// <summary>Creates a chain of <paramref name="length"/> dispatches on <paramref name="context"/>.</summary>
    public PostChain(SynchronizationContext context, int length)
    {
        _context = context;
        Length = length;
    }

    /// <summary>Gets the number of dispatches one run performs.</summary>
    public int Length { get; }

    /// <summary>Runs the chain and waits until its last callback has run.</summary>
    public void Run()
    {
        _remaining = Length;
        _done.Reset();
        _context.Post(s_step, this);
        _done.Wait();
    }

    /// <inheritdoc />
    public void Dispose() => _done.Dispose();

    private void Step()
    {
        if (--_remaining == 0)
        {
            _done.Set();
            return;
        }

        _context.Post(s_step, this);
    }
}
