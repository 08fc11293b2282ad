using PriorityAsync;

namespace LeaseSimulation.Timing;

/// <summary>
/// Scenario time on a <see cref="VirtualTimeProvider"/>: the single-thread context jumps it to the next timer when
/// idle, and a CPU operation advances it while holding the thread. Deterministic.
/// </summary>
public sealed class VirtualScenarioClock : ScenarioClock
{
    private readonly VirtualTimeProvider _clock = new();

    /// <inheritdoc />
    public override TimeSpan Now => _clock.Elapsed;

    /// <inheritdoc />
    public override TimeProvider TimeProvider => _clock;

    /// <inheritdoc />
    public override VirtualTimeProvider VirtualTime => _clock;

    /// <summary>
    /// Advances the clock by <paramref name="duration"/> with no synchronization context, so the continuations of
    /// timers due meanwhile are posted to their context and run after the operation, as on a blocked thread,
    /// instead of being inlined into it.
    /// </summary>
    /// <param name="duration">The scenario duration.</param>
    public override void HoldThread(TimeSpan duration)
    {
        var context = SynchronizationContext.Current;
        SynchronizationContext.SetSynchronizationContext(null);
        try
        {
            _clock.Advance(duration);
        }
        finally
        {
            SynchronizationContext.SetSynchronizationContext(context);
        }
    }

    /// <inheritdoc />
    public override IDisposable StartMonitor(TimeSpan interval, Action<TimeSpan> sample)
    {
        ArgumentNullException.ThrowIfNull(sample);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(interval, TimeSpan.Zero);
        return _clock.CreateTimer(_ => sample(_clock.Elapsed), null, interval, interval);
    }

    /// <inheritdoc />
    protected override TimeSpan ToClockTime(TimeSpan duration) => duration;
}
