namespace PriorityAsync;

public sealed partial class VirtualTimeProvider
{
    /// <summary>Moves the clock forward by <paramref name="delta"/>, firing every timer that falls due on the way.</summary>
    /// <param name="delta">How far to move; zero fires the timers that are already due.</param>
    /// <exception cref="ArgumentOutOfRangeException">
    /// <paramref name="delta"/> is negative, or would move the clock past <see cref="DateTimeOffset.MaxValue"/>.
    /// </exception>
    public void Advance(TimeSpan delta)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(delta, TimeSpan.Zero);
        long target;
        lock (_gate)
        {
            if (delta.Ticks > _maxTicks - _nowTicks)
            {
                throw new ArgumentOutOfRangeException(nameof(delta), delta, $"Advancing a virtual clock at {GetUtcNow():O} by {delta} would move it past DateTimeOffset.MaxValue.");
            }

            target = _nowTicks + delta.Ticks;
        }

        AdvanceToTicks(target);
    }

    /// <summary>Moves the clock forward to <paramref name="time"/>, firing every timer that falls due on the way.</summary>
    /// <param name="time">The new current time; it must not be earlier than <see cref="GetUtcNow"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="time"/> is earlier than the current time.</exception>
    public void AdvanceTo(DateTimeOffset time)
    {
        var target = (time - _start).Ticks;
        if (target < Volatile.Read(ref _nowTicks))
        {
            throw new ArgumentOutOfRangeException(nameof(time), time, "A virtual clock cannot move backwards; the time must not be earlier than GetUtcNow().");
        }

        AdvanceToTicks(target);
    }

    /// <summary>
    /// Moves the clock to the due time of the earliest armed timer and fires every timer due at that instant.
    /// </summary>
    /// <returns><see langword="true"/> when a timer fired; <see langword="false"/> when no timer is armed.</returns>
    public bool TryAdvanceToNextTimer()
    {
        long due;
        lock (_gate)
        {
            if (!_timers.TryPeekArmed(out _, out due))
            {
                return false;
            }
        }

        AdvanceToTicks(Math.Max(due, Volatile.Read(ref _nowTicks)));
        return true;
    }

    private void AdvanceToTicks(long target)
    {
        while (true)
        {
            VirtualTimer? timer;
            lock (_gate)
            {
                if (!_timers.TryPeekArmed(out timer, out var due) || due > target)
                {
                    if (target > _nowTicks)
                    {
                        Volatile.Write(ref _nowTicks, target);
                    }

                    return;
                }

                _timers.RemoveFirst();
                if (due > _nowTicks)
                {
                    Volatile.Write(ref _nowTicks, due);
                }

                timer.OnDequeuedLocked(_nowTicks);
            }

            timer.Fire();
        }
    }
}
