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
    private readonly ParkingGate _gate = new();
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
    public void Run() => _gate.RunOnce();

    /// <summary>Releases the parked thread for good.</summary>
    public void Dispose() => _gate.Dispose();

    private void Park()
    {
        if (!_gate.Park())
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
            _gate.RunFinished();
            Park();
            return;
        }

        _lane.Post(s_step, this);
    }
}
