using System.Diagnostics;

namespace PriorityAsync;

internal sealed partial class DedicatedTimerTimeProvider
{
    /// <summary>One timer of the dedicated timer thread; stale heap entries are skipped lazily.</summary>
    private sealed class Timer : ITimer
    {
        private readonly DedicatedTimerTimeProvider _owner;
        private readonly TimerCallback _callback;
        private readonly object? _state;
        private long _armedSequence;
        private long _periodTimestamp;
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

                _periodTimestamp = period == Timeout.InfiniteTimeSpan || period == TimeSpan.Zero ? 0 : ToTimestamp(period);
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

        public void Fire() => _callback(_state);

        public void Dispose()
        {
            lock (_owner._gate)
            {
                _disposed = true;
                _armedSequence = 0;
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
