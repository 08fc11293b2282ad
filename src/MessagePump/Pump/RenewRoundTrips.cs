namespace PriorityAsync.MessagePump;

/// <summary>
/// The renew round trips a pump has observed, over a sliding window of the last <see cref="Window"/> calls, and the
/// lock time a renewal must start with to finish before the lock ends: the worst round trip of the window times
/// <see cref="SafetyFactor"/>. Thread-safe.
/// </summary>
internal sealed class RenewRoundTrips
{
    /// <summary>How many recent round trips the rule looks at.</summary>
    public const int Window = 32;

    /// <summary>How many worst round trips of lock time a renewal starts with.</summary>
    public const int SafetyFactor = 3;

    private readonly long[] _ticks = new long[Window];
    private readonly Lock _gate = new();
    private int _next;
    private int _count;

    /// <summary>Records one completed renew call.</summary>
    public void Record(TimeSpan roundTrip)
    {
        lock (_gate)
        {
            _ticks[_next] = Math.Max(0, roundTrip.Ticks);
            _next = (_next + 1) % Window;
            _count = Math.Min(_count + 1, Window);
        }
    }

    /// <summary>Gets the worst round trip of the window, or zero before the first.</summary>
    public TimeSpan Worst
    {
        get
        {
            lock (_gate)
            {
                var worst = 0L;
                for (var i = 0; i < _count; i++)
                {
                    worst = Math.Max(worst, _ticks[i]);
                }

                return TimeSpan.FromTicks(worst);
            }
        }
    }

    /// <summary>Gets the lock time a renewal must start with to finish in time: <see cref="SafetyFactor"/> × <see cref="Worst"/>.</summary>
    public TimeSpan RequiredSlack => TimeSpan.FromTicks(Worst.Ticks * SafetyFactor);
}
