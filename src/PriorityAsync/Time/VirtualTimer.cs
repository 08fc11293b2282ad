namespace PriorityAsync;

/// <summary>One timer of a <see cref="VirtualTimeProvider"/>, due in virtual ticks; stale heap entries are skipped lazily.</summary>
internal sealed class VirtualTimer : HeapTimer
{
    private readonly VirtualTimeProvider _owner;
    private long _periodTicks;

    public VirtualTimer(VirtualTimeProvider owner, TimerCallback callback, object? state)
        : base(owner.Gate, callback, state)
    {
        _owner = owner;
    }

    public override void OnDequeuedLocked(long now)
    {
        ArmedSequence = _periodTicks > 0 && _periodTicks <= long.MaxValue - now ? _owner.ArmLocked(this, now + _periodTicks) : 0;
    }

    protected override void ChangeLocked(TimeSpan dueTime, TimeSpan period)
    {
        _periodTicks = period == Timeout.InfiniteTimeSpan ? 0 : period.Ticks;
        DisarmLocked();
        var now = _owner.NowTicksLocked;
        ArmedSequence = dueTime == Timeout.InfiniteTimeSpan
            ? 0
            : _owner.ArmLocked(this, dueTime.Ticks > long.MaxValue - now ? long.MaxValue : now + dueTime.Ticks);
    }

    protected override void OnDisarmedLocked() => _owner.OnTimerDisarmedLocked();
}
