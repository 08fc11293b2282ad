using System.Diagnostics;

namespace PriorityAsync.TestKit;

/// <summary>CPU-bound work for real-clock tests: the thread stays busy, as a handler's computation keeps it.</summary>
public static class CpuBound
{
    /// <summary>Holds the calling thread for <paramref name="duration"/> of wall-clock time, spinning.</summary>
    /// <param name="duration">How long to hold the thread.</param>
    public static void Hold(TimeSpan duration)
    {
        var until = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < until)
        {
            Thread.SpinWait(100);
        }
    }
}
