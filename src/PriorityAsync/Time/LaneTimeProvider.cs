namespace PriorityAsync;

/// <summary>
/// The <see cref="PriorityScheduler.TimeProvider"/> of a scheduler: time comes from the scheduler's clock, and each
/// timer callback is enqueued into the lane that was current when the timer was created (the most urgent lane when
/// it was created outside the scheduler), so it runs on the scheduler's own threads at that lane's priority.
/// </summary>
internal sealed class LaneTimeProvider : TimeProvider
{
    private readonly PriorityScheduler _scheduler;
    private readonly TimeProvider _clock;

    public LaneTimeProvider(PriorityScheduler scheduler, TimeProvider clock)
    {
        _scheduler = scheduler;
        _clock = clock;
    }

    public override TimeZoneInfo LocalTimeZone => _clock.LocalTimeZone;

    public override long TimestampFrequency => _clock.TimestampFrequency;

    public override DateTimeOffset GetUtcNow() => _clock.GetUtcNow();

    public override long GetTimestamp() => _clock.GetTimestamp();

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        ArgumentNullException.ThrowIfNull(callback);
        var lane = _scheduler.CurrentLaneOnThisThread ?? _scheduler.Lanes[0];
        var firing = new TimerFiring(lane, callback, state);
        return _clock.CreateTimer(static s => ((TimerFiring)s!).Enqueue(), firing, dueTime, period);
    }

    /// <summary>What one timer enqueues each time it fires.</summary>
    private sealed class TimerFiring(Lane lane, TimerCallback callback, object? state)
    {
        public void Enqueue() => lane.Scheduler.Enqueue(lane, callback, state);
    }
}
