namespace PriorityAsync;

/// <summary>
/// A timer kept in its provider's <see cref="TimerHeap{TTimer}"/>: the checks, the arming bookkeeping and the
/// disposal that both clocks' timers share. The provider decides what a due time means (real or virtual ticks) and
/// where the timer goes when it fires; everything here runs under the provider's lock.
/// </summary>
internal abstract class HeapTimer : ITimer, IHeapTimer
{
    private readonly object _gate;
    private readonly TimerCallback _callback;
    private readonly object? _state;
    private long _armedSequence;
    private bool _disposed;

    /// <summary>Creates a timer guarded by <paramref name="gate"/>, its provider's lock.</summary>
    protected HeapTimer(object gate, TimerCallback callback, object? state)
    {
        _gate = gate;
        _callback = callback;
        _state = state;
    }

    /// <summary>Gets or sets the sequence number of the live heap entry, 0 when none (call under the provider's lock).</summary>
    protected long ArmedSequence
    {
        get => _armedSequence;
        set => _armedSequence = value;
    }

    /// <summary>Gets whether the timer has been disposed (read under the provider's lock).</summary>
    protected bool IsDisposed => _disposed;

    /// <summary>True when the heap entry with <paramref name="sequence"/> is this timer's live arming.</summary>
    public bool IsArmedFor(long sequence) => !_disposed && _armedSequence == sequence;

    /// <inheritdoc />
    public bool Change(TimeSpan dueTime, TimeSpan period)
    {
        ThrowIfInvalid(dueTime, nameof(dueTime));
        ThrowIfInvalid(period, nameof(period));
        lock (_gate)
        {
            if (_disposed)
            {
                return false;
            }

            ChangeLocked(dueTime, period);
            return true;
        }
    }

    /// <summary>Called under the provider's lock when the heap hands this timer out; re-arms a periodic timer.</summary>
    public abstract void OnDequeuedLocked(long now);

    /// <summary>Runs the callback, on the thread that fires the timer.</summary>
    public void Fire() => _callback(_state);

    /// <inheritdoc />
    public void Dispose()
    {
        lock (_gate)
        {
            DisarmLocked();
            _disposed = true;
            OnDisposedLocked();
        }
    }

    /// <inheritdoc />
    public ValueTask DisposeAsync()
    {
        Dispose();
        return ValueTask.CompletedTask;
    }

    /// <summary>Arms the timer for <paramref name="dueTime"/> (validated, the timer not disposed) under the provider's lock.</summary>
    protected abstract void ChangeLocked(TimeSpan dueTime, TimeSpan period);

    /// <summary>Tells the provider's heap that this timer's entry became stale.</summary>
    protected abstract void OnDisarmedLocked();

    /// <summary>Releases what the timer holds besides its heap entry; called once, under the provider's lock.</summary>
    protected virtual void OnDisposedLocked()
    {
    }

    /// <summary>Marks this timer's heap entry, if any, stale. Call under the provider's lock.</summary>
    protected void DisarmLocked()
    {
        if (_armedSequence != 0)
        {
            _armedSequence = 0;
            OnDisarmedLocked();
        }
    }

    private static void ThrowIfInvalid(TimeSpan value, string name)
    {
        if (value < TimeSpan.Zero && value != Timeout.InfiniteTimeSpan)
        {
            throw new ArgumentOutOfRangeException(name, value, "The time must be zero or positive, or Timeout.InfiniteTimeSpan.");
        }
    }
}
