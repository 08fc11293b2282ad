namespace PriorityAsync;

public sealed partial class VirtualTimeProvider
{
    /// <summary>One timer of a <see cref="VirtualTimeProvider"/>; armed entries are lazily removed from the heap.</summary>
    private sealed class Timer : ITimer, IHeapTimer
    {
        private readonly VirtualTimeProvider _owner;
        private readonly TimerCallback _callback;
        private readonly object? _state;
        private long _armedSequence;
        private long _periodTicks;
        private bool _disposed;

        public Timer(VirtualTimeProvider owner, TimerCallback callback, object? state)
        {
            _owner = owner;
            _callback = callback;
            _state = state;
        }

        /// <summary>True when the heap entry with <paramref name="sequence"/> is this timer's live arming.</summary>
        public bool IsArmedFor(long sequence) => !_disposed && _armedSequence == sequence;

        public bool Change(TimeSpan dueTime, TimeSpan period)
        {
            ValidateDelay(dueTime, nameof(dueTime));
            ValidateDelay(period, nameof(period));
            lock (_owner._gate)
            {
                if (_disposed)
                {
                    return false;
                }

                _periodTicks = period == Timeout.InfiniteTimeSpan ? 0 : period.Ticks;
                DisarmLocked();
                _armedSequence = dueTime == Timeout.InfiniteTimeSpan
                    ? 0
                    : _owner.ArmLocked(this, dueTime.Ticks > long.MaxValue - _owner._nowTicks ? long.MaxValue : _owner._nowTicks + dueTime.Ticks);
                return true;
            }
        }

        /// <summary>Called under the owner's lock when the heap hands this timer out; re-arms a periodic timer.</summary>
        public void OnDequeuedLocked(long now)
        {
            _armedSequence = _periodTicks > 0 && _periodTicks <= long.MaxValue - now ? _owner.ArmLocked(this, now + _periodTicks) : 0;
        }

        public void Fire() => _callback(_state);

        public void Dispose()
        {
            lock (_owner._gate)
            {
                DisarmLocked();
                _disposed = true;
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

        private static void ValidateDelay(TimeSpan value, string name)
        {
            if (value < TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
            {
                throw new ArgumentOutOfRangeException(name, value, "The time must be zero or positive, or Timeout.InfiniteTimeSpan.");
            }
        }
    }
}
