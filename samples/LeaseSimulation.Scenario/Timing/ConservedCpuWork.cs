namespace LeaseSimulation.Timing;

/// <summary>
/// The <c>work</c> CPU mode: burns CPU until the calling thread's own CPU time has advanced by the requested amount,
/// so a thread that other threads deschedule takes longer in wall time, as real computation does.
/// </summary>
public static class ConservedCpuWork
{
    /// <summary>Burns CPU until <paramref name="threadCpuTime"/> has advanced by <paramref name="work"/>.</summary>
    /// <param name="work">The CPU time to use; zero or negative returns at once.</param>
    /// <param name="threadCpuTime">Reads the calling thread's CPU time (<see cref="ThreadCpuTime.Now"/>; a fake in tests).</param>
    /// <param name="burn">One short slice of computation between two reads (a spin wait by default).</param>
    /// <returns>The CPU time used, at least <paramref name="work"/> when positive.</returns>
    public static TimeSpan Run(TimeSpan work, Func<TimeSpan> threadCpuTime, Action? burn = null)
    {
        ArgumentNullException.ThrowIfNull(threadCpuTime);
        burn ??= static () => Thread.SpinWait(64);
        var start = threadCpuTime();
        var used = TimeSpan.Zero;
        while (used < work)
        {
            burn();
            used = threadCpuTime() - start;
        }

        return used;
    }
}
