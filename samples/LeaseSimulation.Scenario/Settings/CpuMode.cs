namespace LeaseSimulation.Settings;

/// <summary>How a CPU operation holds its thread on the real clock (the virtual clock just advances).</summary>
public enum CpuMode
{
    /// <summary>Blocks the thread with <see cref="Thread.Sleep(TimeSpan)"/>, as the seed does: no CPU used, any number overlap.</summary>
    Sleep,

    /// <summary>Burns CPU in a spin loop for the scaled duration of wall time, however much CPU the thread got meanwhile.</summary>
    Spin,

    /// <summary>
    /// Conserved work: burns CPU until the thread's own CPU time has advanced by the scaled duration, so an
    /// oversubscribed machine takes longer, as with real computation. Falls back to <see cref="Spin"/> where the
    /// thread CPU clock is unavailable (see <c>ThreadCpuTime</c>).
    /// </summary>
    Work,
}
