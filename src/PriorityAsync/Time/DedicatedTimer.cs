using System.Diagnostics;

namespace PriorityAsync;

/// <summary>
/// One timer of a <see cref="DedicatedTimerTimeProvider"/>, due in <see cref="Stopwatch"/> ticks; stale heap entries
/// are skipped lazily. After the provider's disposal it delegates to a system timer.
/// </summary>
internal sealed class DedicatedTimer : HeapTimer
{
    private readonly DedicatedTimerTimeProvider _owner;
    private long _periodTimestamp;
    private TimeSpan _period = Timeout.InfiniteTimeSpan;
    private ITimer? _systemTimer;
    private long _systemDue;
    private TimeSpan _systemPeriod;

    public DedicatedTimer(DedicatedTimerTimeProvider owner, TimerCallback callback, object? state)
        : base(owner.Gate, callback, state)
    {
        _owner = owner;
    }

    public override void OnDequeuedLocked(long now)
    {
        ArmedSequence = _periodTimestamp > 0 ? _owner.ArmLocked(this, now + _periodTimestamp) : 0;
    }

    /// <summary>Called under the owner's lock at its disposal: keeps this armed timer's due time on a system timer.</summary>
    public void MoveToSystemTimerLocked(long dueTimestamp)
    {
        var remaining = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), dueTimestamp);
        ArmedSequence = 0;
        ArmSystemTimerLocked(remaining > TimeSpan.Zero ? remaining : TimeSpan.Zero, _period);
    }

    protected override void ChangeLocked(TimeSpan dueTime, TimeSpan period)
    {
        if (_owner.IsDisposedLocked)
        {
            ArmSystemTimerLocked(dueTime, period);
            return;
        }

        _period = period;
        _periodTimestamp = period == Timeout.InfiniteTimeSpan || period == TimeSpan.Zero ? 0 : ToTimestamp(period);
        DisarmLocked();
        ArmedSequence = dueTime == Timeout.InfiniteTimeSpan
            ? 0
            : _owner.ArmLocked(this, SaturatingAdd(Stopwatch.GetTimestamp(), ToTimestamp(dueTime)));
    }

    protected override void OnDisarmedLocked() => _owner.OnTimerDisarmedLocked();

    protected override void OnDisposedLocked() => _systemTimer?.Dispose();

    private static TimeSpan Hop(TimeSpan remaining) =>
        remaining > PrioritySchedulerOptions.MaxTimerDelay ? PrioritySchedulerOptions.MaxTimerDelay : remaining;

    private static long ToTimestamp(TimeSpan span) => (long)Math.Min(span.Ticks * ((double)Stopwatch.Frequency / TimeSpan.TicksPerSecond), long.MaxValue / 2);

    private static long SaturatingAdd(long a, long b) => b > long.MaxValue - a ? long.MaxValue : a + b;

    /// <summary>
    /// Arms the system timer that replaces the dedicated thread after disposal. A system timer takes at most
    /// <see cref="PrioritySchedulerOptions.MaxTimerDelay"/>, so a later due time is reached in several hops.
    /// </summary>
    private void ArmSystemTimerLocked(TimeSpan dueTime, TimeSpan period)
    {
        _systemTimer ??= TimeProvider.System.CreateTimer(static s => ((DedicatedTimer)s!).OnSystemTimer(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        _systemPeriod = period;
        if (dueTime == Timeout.InfiniteTimeSpan)
        {
            _systemTimer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            return;
        }

        _systemDue = SaturatingAdd(Stopwatch.GetTimestamp(), ToTimestamp(dueTime));
        _systemTimer.Change(Hop(dueTime), Timeout.InfiniteTimeSpan);
    }

    private void OnSystemTimer()
    {
        lock (_owner.Gate)
        {
            if (IsDisposed)
            {
                return;
            }

            var remaining = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), _systemDue);
            if (remaining > TimeSpan.Zero)
            {
                _systemTimer!.Change(Hop(remaining), Timeout.InfiniteTimeSpan);
                return;
            }

            if (_systemPeriod != Timeout.InfiniteTimeSpan && _systemPeriod > TimeSpan.Zero)
            {
                ArmSystemTimerLocked(_systemPeriod, _systemPeriod);
            }
        }

        Fire();
    }
}
