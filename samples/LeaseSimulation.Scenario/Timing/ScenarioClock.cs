using LeaseSimulation.Settings;

namespace LeaseSimulation.Timing;

/// <summary>
/// Scenario time for one run: the current time, awaited delays, CPU operations that hold the thread, and the periodic
/// monitor. Durations passed in are scenario durations; a real clock scales them.
/// </summary>
public abstract class ScenarioClock
{
    /// <summary>Gets the scenario time elapsed since the run started.</summary>
    public abstract TimeSpan Now { get; }

    /// <summary>Gets the clock's own time provider, as plain (unprioritised) code would use it for delays.</summary>
    public abstract TimeProvider TimeProvider { get; }

    /// <summary>Gets the virtual clock, or <see langword="null"/> on the real clock.</summary>
    public virtual PriorityAsync.VirtualTimeProvider? VirtualTime => null;

    /// <summary>Creates the clock that <paramref name="settings"/> ask for.</summary>
    /// <param name="settings">The run's settings.</param>
    /// <returns>A virtual or a scaled real clock.</returns>
    public static ScenarioClock Create(SimulationSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return settings.Clock == ClockKind.Virtual
            ? new VirtualScenarioClock()
            : new RealScenarioClock(settings.TimeScale, settings.CpuMode);
    }

    /// <summary>Waits <paramref name="duration"/> of scenario time on the timers of <paramref name="timers"/>.</summary>
    /// <param name="duration">The scenario duration.</param>
    /// <param name="timers">The time provider whose timer completes the wait (the clock's own, or a scheduler's).</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A task that completes after the duration.</returns>
    public Task Delay(TimeSpan duration, TimeProvider timers, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(timers);
        return Task.Delay(ToClockTime(duration), timers, cancellationToken);
    }

    /// <summary>
    /// Runs one CPU operation of <paramref name="duration"/>: holds the calling thread (the seed's blocking
    /// <c>Thread.Sleep</c>). Continuations released meanwhile are queued, never run inside the operation.
    /// </summary>
    /// <param name="duration">The scenario duration.</param>
    public abstract void HoldThread(TimeSpan duration);

    /// <summary>Calls <paramref name="sample"/> every <paramref name="interval"/> of scenario time until disposed.</summary>
    /// <param name="interval">The scenario interval.</param>
    /// <param name="sample">Called with the scenario time; must be short and thread-safe.</param>
    /// <returns>Stops the monitor.</returns>
    public abstract IDisposable StartMonitor(TimeSpan interval, Action<TimeSpan> sample);

    /// <summary>Converts a scenario duration to a duration of this clock.</summary>
    /// <param name="duration">The scenario duration.</param>
    /// <returns>The clock duration.</returns>
    protected abstract TimeSpan ToClockTime(TimeSpan duration);
}
