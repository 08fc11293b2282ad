namespace LeaseSimulation.Settings;

/// <summary>How a CPU operation holds its thread on the real clock.</summary>
public enum CpuMode
{
    /// <summary>Blocks the thread with <see cref="Thread.Sleep(TimeSpan)"/>, as the seed does.</summary>
    Sleep,

    /// <summary>Really burns CPU in a spin loop for the duration.</summary>
    Spin,
}
