using System.Diagnostics;

namespace PriorityAsync.Benchmarks.LeaseLatency;

/// <summary>
/// The two kinds of work of a harness cell: processors that hold their thread for a slice (busy-spinning, or blocked in
/// a sleep like sync-over-async) then yield, and a lease loop that renews every <see cref="RenewInterval"/> and
/// records how late each renewal ran.
/// </summary>
internal sealed class LeaseWorkload(TimeSpan slice, SliceKind kind, TimeSpan renewInterval, TimeProvider leaseClock, LatenessRecorder recorder)
{
    private volatile bool _stopping;
    private long _slicesRun;

    public TimeSpan RenewInterval { get; } = renewInterval;

    public long SlicesRun => Interlocked.Read(ref _slicesRun);

    public void Stop() => _stopping = true;

    /// <summary>Holds the thread for one slice, then yields to the current context (lane, loop or pool), until stopped.</summary>
    public async Task ProcessorAsync()
    {
        while (!_stopping)
        {
            if (kind == SliceKind.Block)
            {
                Thread.Sleep(slice);
            }
            else
            {
                SpinFor(slice);
            }

            Interlocked.Increment(ref _slicesRun);
            await Task.Yield();
        }
    }

    /// <summary>Waits the renew interval on the lease clock, records the lateness, and repeats until stopped.</summary>
    public async Task LeaseLoopAsync()
    {
        while (!_stopping)
        {
            recorder.BeginWait(RenewInterval);
            await Task.Delay(RenewInterval, leaseClock);
            recorder.EndWait();
        }
    }

    private static void SpinFor(TimeSpan duration)
    {
        var end = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < end)
        {
            Thread.SpinWait(20);
        }
    }
}
