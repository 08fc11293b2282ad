namespace PriorityAsync.TestKit;

/// <summary>
/// A clock whose timers are counted: created, and still alive (not disposed). Time and timers come from
/// <c>inner</c> (the system clock when none is given).
/// </summary>
/// <param name="inner">The clock that gives the time and the timers; <see cref="TimeProvider.System"/> when <see langword="null"/>.</param>
public sealed class TrackingTimeProvider(TimeProvider? inner = null) : TimeProvider
{
    private readonly TimeProvider _inner = inner ?? System;
    private int _created;
    private int _live;

    /// <summary>Gets how many timers were created.</summary>
    public int Created => Volatile.Read(ref _created);

    /// <summary>Gets how many created timers are not disposed yet.</summary>
    public int Live => Volatile.Read(ref _live);

    /// <inheritdoc />
    public override long TimestampFrequency => _inner.TimestampFrequency;

    /// <inheritdoc />
    public override long GetTimestamp() => _inner.GetTimestamp();

    /// <inheritdoc />
    public override DateTimeOffset GetUtcNow() => _inner.GetUtcNow();

    /// <inheritdoc />
    public override TimeZoneInfo LocalTimeZone => _inner.LocalTimeZone;

    /// <inheritdoc />
    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        Interlocked.Increment(ref _created);
        Interlocked.Increment(ref _live);
        return new TrackedTimer(this, _inner.CreateTimer(callback, state, dueTime, period));
    }

    private sealed class TrackedTimer(TrackingTimeProvider owner, ITimer inner) : ITimer
    {
        private int _disposed;

        public bool Change(TimeSpan dueTime, TimeSpan period) => inner.Change(dueTime, period);

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                Interlocked.Decrement(ref owner._live);
            }

            inner.Dispose();
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return ValueTask.CompletedTask;
        }
    }
}
