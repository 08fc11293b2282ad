namespace PriorityAsync;

/// <summary>
/// A <see cref="TimeProvider"/> whose clock moves only when told to: by <see cref="Advance(TimeSpan)"/>
/// or <see cref="TryAdvanceToNextTimer"/>.
/// </summary>
/// <remarks>
/// <para>
/// Timers fire on the thread that advances the clock, in due-time order; timers due at the same instant fire
/// in the order they were armed. While a timer callback runs, <see cref="GetUtcNow"/> returns that timer's due
/// time, so a callback observes exactly the time it was scheduled for.
/// </para>
/// <para>
/// A <see cref="PriorityAsyncContext"/> created with a <see cref="VirtualTimeProvider"/> jumps the clock to the
/// next due timer whenever no lane has ready work, which lets a scenario of many minutes run in milliseconds
/// and give the same result on every run. All members are thread-safe.
/// </para>
/// </remarks>
public sealed class VirtualTimeProvider : TimeProvider
{
    private static readonly DateTimeOffset DefaultStart = new(2000, 1, 1, 0, 0, 0, TimeSpan.Zero);

    private readonly object _gate = new();
    private readonly TimerHeap<VirtualTimer> _timers = new();
    private readonly DateTimeOffset _start;
    private readonly long _maxTicks;
    private long _nowTicks;

    /// <summary>Creates a virtual clock that starts at 2000-01-01T00:00:00Z.</summary>
    public VirtualTimeProvider()
        : this(DefaultStart)
    {
    }

    /// <summary>Creates a virtual clock that starts at <paramref name="start"/>.</summary>
    /// <param name="start">The initial value of <see cref="GetUtcNow"/>; earlier than <see cref="DateTimeOffset.MaxValue"/>.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="start"/> is <see cref="DateTimeOffset.MaxValue"/>: the clock could never move.</exception>
    public VirtualTimeProvider(DateTimeOffset start)
    {
        _start = start.ToUniversalTime();
        _maxTicks = (DateTimeOffset.MaxValue - _start).Ticks;
        if (_maxTicks <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(start), start, "A virtual clock must start earlier than DateTimeOffset.MaxValue, or it could never move.");
        }
    }

    /// <summary>Gets the virtual time that has passed since the clock was created.</summary>
    public TimeSpan Elapsed => TimeSpan.FromTicks(Volatile.Read(ref _nowTicks));

    /// <summary>
    /// Gets the number of armed timers (timers with a finite due time that have not fired yet). A timer due after
    /// <see cref="DateTimeOffset.MaxValue"/> can never fire and is not armed.
    /// </summary>
    internal int ActiveTimerCount
    {
        get
        {
            lock (_gate)
            {
                return _timers.CountArmed();
            }
        }
    }

    /// <summary>Gets the due time of the earliest armed timer, or <see langword="null"/> when no timer is armed.</summary>
    public DateTimeOffset? NextTimerDue
    {
        get
        {
            lock (_gate)
            {
                return _timers.TryPeekArmed(out _, out var due) ? _start.AddTicks(due) : null;
            }
        }
    }

    /// <summary>Gets the lock that guards the clock, the heap and every timer's arming.</summary>
    internal object Gate => _gate;

    /// <summary>Gets the clock's ticks since its start; read under <see cref="Gate"/>.</summary>
    internal long NowTicksLocked => _nowTicks;

    /// <inheritdoc />
    public override TimeZoneInfo LocalTimeZone => TimeZoneInfo.Utc;

    /// <inheritdoc />
    public override long TimestampFrequency => TimeSpan.TicksPerSecond;

    /// <inheritdoc />
    public override DateTimeOffset GetUtcNow() => _start.AddTicks(Volatile.Read(ref _nowTicks));

    /// <inheritdoc />
    public override long GetTimestamp() => Volatile.Read(ref _nowTicks);

    /// <inheritdoc />
    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        ArgumentNullException.ThrowIfNull(callback);
        var timer = new VirtualTimer(this, callback, state);
        timer.Change(dueTime, period);
        return timer;
    }

    /// <summary>Arms <paramref name="timer"/> for <paramref name="due"/>; returns 0 (not armed) when the clock can never get there.</summary>
    internal long ArmLocked(VirtualTimer timer, long due)
    {
        if (due > _maxTicks)
        {
            return 0;
        }

        return _timers.Arm(timer, due);
    }

    /// <summary>Records that a timer's heap entry became stale; call under <see cref="Gate"/>.</summary>
    internal void OnTimerDisarmedLocked() => _timers.OnDisarmed();

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
    internal void AdvanceTo(DateTimeOffset time)
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
