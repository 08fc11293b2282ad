namespace PriorityAsync.Benchmarks.Backlog;

/// <summary>
/// A chain of posts into one lane whose last callback parks the context's thread until the next run. While parked,
/// the thread sits inside a callback of the urgent lane, so the backlog waiting in lower lanes never runs and stays
/// the same size from one run to the next.
/// </summary>
public sealed class ParkedPostChain : IDisposable
{
    private static readonly SendOrPostCallback s_step = static s => ((ParkedPostChain)s!).Step();
    private static readonly SendOrPostCallback s_park = static s => ((ParkedPostChain)s!).Park();

    private readonly SynchronizationContext _lane;
    private readonly ManualResetEventSlim _go = new();
    private readonly ManualResetEventSlim _done = new();
    private volatile bool _stopping;
    private int _remaining;

    /// <summary>Creates a chain of <paramref name="length"/> dispatches in the lane whose context is <paramref name="lane"/>.</summary>
    public ParkedPostChain(SynchronizationContext lane, int length)
    {
        _lane = lane;
        Length = length;
    }

    /// <summary>Gets the number of dispatches one run performs.</summary>
    public int Length { get; }

    /// <summary>Parks the context's thread; call once, after queuing the backlog.</summary>
    public void Start() => _lane.Post(s_park, this);

    /// <summary>Releases the parked thread, which runs the chain and parks again.</summary>
    public void Run()
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

    private void Park()
    {
        _go.Wait();
        _go.Reset();
        if (_stopping)
        {
            return;
        }

        _remaining = Length;
        _lane.Post(s_step, this);
    }

    private void Step()
    {
        if (--_remaining == 0)
        {
            _done.Set();
            Park();
            return;
        }

        _lane.Post(s_step, this);
    }
}
