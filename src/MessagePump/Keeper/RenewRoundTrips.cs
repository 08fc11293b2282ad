namespace PriorityAsync.MessagePump;

/// <summary>
/// The renew round trips a lease keeper has observed, over a sliding window of the last <see cref="Window"/> calls, and the
/// lock time a renewal must start with to finish before the lock ends: the worst round trip of the window times
/// <see cref="SafetyFactor"/>; and, over the same window, the worst time a renewal took to reach the broker (which tells
/// whether a hedged renewal could still arrive in time). Thread-safe.
/// </summary>
internal sealed class RenewRoundTrips
{
    /// <summary>How many recent round trips the rule looks at.</summary>
    public const int Window = 32;

    /// <summary>How many worst round trips of lock time a renewal starts with.</summary>
    public const int SafetyFactor = 3;

    private readonly long[] _ticks = new long[Window];
    private readonly long[] _requestTicks = new long[Window];
    private readonly Lock _gate = new();
    private int _next;
    private int _count;

    /// <summary>Records one completed renew call whose way to the broker is not known (taken as the whole round trip).</summary>
    public void Record(TimeSpan roundTrip) => Record(roundTrip, roundTrip);

    /// <summary>Records one completed renew call; <paramref name="requestLeg"/> is how long it took to reach the broker (at most <paramref name="roundTrip"/>).</summary>
    public void Record(TimeSpan roundTrip, TimeSpan requestLeg)
    {
        lock (_gate)
        {
            _ticks[_next] = Math.Max(0, roundTrip.Ticks);
            _requestTicks[_next] = Math.Clamp(requestLeg.Ticks, 0, _ticks[_next]);
            _next = (_next + 1) % Window;
            _count = Math.Min(_count + 1, Window);
        }
    }

    /// <summary>Gets the worst round trip of the window, or zero before the first.</summary>
    public TimeSpan Worst => WorstOf(_ticks);

    /// <summary>Gets the worst time a renewal of the window took to reach the broker, or zero before the first.</summary>
    public TimeSpan WorstRequestLeg => WorstOf(_requestTicks);

    /// <summary>
    /// Gets the typical time a renewal of the window took to reach the broker (the median), or zero before the first: what
    /// a renewal under way has most likely taken so far. One slow leg — the first renewal on a link the client opens
    /// with it — moves <see cref="WorstRequestLeg"/> for a whole window, not this.
    /// </summary>
    public TimeSpan TypicalRequestLeg
    {
        get
        {
            lock (_gate)
            {
                if (_count == 0)
                {
                    return TimeSpan.Zero;
                }

                Span<long> legs = stackalloc long[Window];
                _requestTicks.AsSpan(0, _count).CopyTo(legs);
                legs = legs[.._count];
                legs.Sort();
                return TimeSpan.FromTicks(legs[_count / 2]);
            }
        }
    }

    /// <summary>Gets the lock time a renewal must start with to finish in time: <see cref="SafetyFactor"/> × <see cref="Worst"/>.</summary>
    public TimeSpan RequiredSlack => TimeSpan.FromTicks(Worst.Ticks * SafetyFactor);

    private TimeSpan WorstOf(long[] ticks)
    {
        lock (_gate)
        {
            var worst = 0L;
            for (var i = 0; i < _count; i++)
            {
                worst = Math.Max(worst, ticks[i]);
            }

            return TimeSpan.FromTicks(worst);
        }
    }
}
