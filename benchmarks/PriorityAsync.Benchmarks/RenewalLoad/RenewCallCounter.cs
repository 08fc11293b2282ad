namespace PriorityAsync.Benchmarks.RenewalLoad;

/// <summary>Counts the renew calls a consumer sends to its broker, and the leases they renew. Thread-safe.</summary>
internal sealed class RenewCallCounter
{
    private long _calls;
    private long _leases;

    /// <summary>Gets the renew calls sent so far (a single renewal and a batch renewal are one call each).</summary>
    public long Calls => Interlocked.Read(ref _calls);

    /// <summary>Gets the leases those calls asked to renew.</summary>
    public long Leases => Interlocked.Read(ref _leases);

    /// <summary>Counts one call that renews <paramref name="leases"/> leases.</summary>
    public void Count(int leases)
    {
        Interlocked.Increment(ref _calls);
        Interlocked.Add(ref _leases, leases);
    }
}
