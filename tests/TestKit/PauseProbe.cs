using System.Diagnostics;

namespace PriorityAsync.TestKit;

/// <summary>
/// Measures how long the machine held the test process back while it ran: a thread of normal priority sleeps 5 ms at
/// a time and records the longest it got back late (a stop of the whole process, a garbage collection, the CPU given
/// to other work). A real-clock test compares it with the margin its claim needs: below the margin the claim must hold;
/// at or above it, no code could have kept it, and the test asserts what holds at any load.
/// </summary>
public sealed class PauseProbe : IDisposable
{
    private static readonly TimeSpan Step = TimeSpan.FromMilliseconds(5);
    private readonly Thread _thread;
    private volatile bool _stopped;
    private long _longestTicks;

    private PauseProbe()
    {
        _thread = new Thread(Measure) { IsBackground = true, Name = "pause probe" };
        _thread.Start();
    }

    /// <summary>Gets the longest time the probe's thread got back later than it asked for, so far.</summary>
    public TimeSpan LongestPause => TimeSpan.FromSeconds(Volatile.Read(ref _longestTicks) / (double)Stopwatch.Frequency);

    /// <summary>Starts measuring.</summary>
    /// <returns>The running probe; dispose it to stop.</returns>
    public static PauseProbe Start() => new();

    /// <inheritdoc />
    public void Dispose()
    {
        _stopped = true;
        _thread.Join();
    }

    private void Measure()
    {
        var step = (long)(Step.TotalSeconds * Stopwatch.Frequency);
        while (!_stopped)
        {
            var before = Stopwatch.GetTimestamp();
            Thread.Sleep(Step);
            var late = Stopwatch.GetTimestamp() - before - step;
            if (late > Volatile.Read(ref _longestTicks))
            {
                Volatile.Write(ref _longestTicks, late);
            }
        }
    }
}
