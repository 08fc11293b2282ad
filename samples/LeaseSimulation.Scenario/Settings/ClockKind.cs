namespace LeaseSimulation.Settings;

/// <summary>What drives scenario time.</summary>
public enum ClockKind
{
    /// <summary>A virtual clock that jumps to the next timer when the thread is idle; single-thread only, deterministic.</summary>
    Virtual,

    /// <summary>The wall clock, with every scenario duration multiplied by <see cref="SimulationSettings.TimeScale"/>.</summary>
    Real,
}
