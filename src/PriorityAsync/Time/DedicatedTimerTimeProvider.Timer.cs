using System.Diagnostics;

namespace PriorityAsync;

internal sealed partial class DedicatedTimerTimeProvider
{
    /// <summary>
    /// One timer of the dedicated timer thread; stale heap entries are skipped lazily. After the provider's disposal it
    /// delegates to a system timer.
    /// </summary>
    private sealed class Timer : ITimer, IHeapTimer
    {
        private readonly DedicatedTimerTimeProvider _owner;
        private readonly TimerCallback _callback;
        private readonly object? _state;
        private long _armedSequence;
        private long _periodTimestamp;
        private TimeSpan _period = Timeout.InfiniteTimeSpan;
        private ITimer? _systemTimer;
        private long _systemDue;
        private TimeSpan _systemPeriod;
        private bool _disposed;

        public Timer(DedicatedTimerTimeProvider owner, TimerCallback callback, object? state)
        {
            _owner = owner;
            _callback = callback;
            _state = state;
        }

        public bool IsArmedFor(long sequence) => !_disposed && _armedSequence == sequence;

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            ThrowIfInvalid(dueTime, nameof(dueTime));
            ThrowIfInvalid(period, nameof(period));
            lock (_owner._gate)
            {
                if (_disposed)
                {
                    return false;
                }

                if (_owner._disposed)
                {
                    ArmSystemTimerLocked(dueTime, period);
                    return true;
                }

                _period = period;
                _periodTimestamp = period == Timeout.InfiniteTimeSpan || period == TimeSpan.Zero ? 0 : ToTimestamp(period);
                DisarmLocked();
                _armedSequence = dueTime == Timeout.InfiniteTimeSpan
                    ? 0
                    : _owner.ArmLocked(this, SaturatingAdd(Stopwatch.GetTimestamp(), ToTimestamp(dueTime)));
                return true;
            }
        }

        public void OnDequeuedLocked(long now)
        {
            _armedSequence = _periodTimestamp > 0 ? _owner.ArmLocked(this, now + _periodTimestamp) : 0;
        }

        /// <summary>Called under the owner's lock at its disposal: keeps this armed timer's due time on a system timer.</summary>
        public void MoveToSystemTimerLocked(long dueTimestamp)
        {
            var remaining = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), dueTimestamp);
            _armedSequence = 0;
            ArmSystemTimerLocked(remaining > TimeSpan.Zero ? remaining : TimeSpan.Zero, _period);
        }

        public void Fire() => _callback(_state);

        /// <summary>
        /// Arms the system timer that replaces the dedicated thread after disposal. A system timer takes at most
        /// <see cref="PrioritySchedulerOptions.MaxTimerDelay"/>, so a later due time is reached in several hops.
        /// </summary>
        private void ArmSystemTimerLocked(TimeSpan dueTime, TimeSpan period)
        {
            _systemTimer ??= TimeProvider.System.CreateTimer(static s => ((Timer)s!).OnSystemTimer(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
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
            lock (_owner._gate)
            {
                if (_disposed)
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

            _callback(_state);
        }

        private static TimeSpan Hop(TimeSpan remaining) =>
            remaining > PrioritySchedulerOptions.MaxTimerDelay ? PrioritySchedulerOptions.MaxTimerDelay : remaining;

        public void Dispose()
        {
            lock (_owner._gate)
            {
                DisarmLocked();
                _disposed = true;
                _systemTimer?.Dispose();
            }
        }

        /// <summary>Marks this timer's heap entry, if any, stale. Call under the owner's lock.</summary>
        private void DisarmLocked()
        {
            if (_armedSequence != 0)
            {
                _armedSequence = 0;
                _owner._timers.OnDisarmed();
            }
        }

        public ValueTask DisposeAsync()
        {
            Dispose();
            return ValueTask.CompletedTask;
        }

        private static long ToTimestamp(TimeSpan span) => (long)Math.Min(span.Ticks * ((double)Stopwatch.Frequency / TimeSpan.TicksPerSecond), long.MaxValue / 2);

        private static long SaturatingAdd(long a, long b) => b > long.MaxValue - a ? long.MaxValue : a + b;

        private static void ThrowIfInvalid(TimeSpan value, string name)
        {
            if (value < TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
            {
                throw new ArgumentOutOfRangeException(name, value, "The time must be zero or positive, or Timeout.InfiniteTimeSpan.");
            }
        }
    }
}
