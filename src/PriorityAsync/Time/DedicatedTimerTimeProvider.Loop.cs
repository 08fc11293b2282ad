using System.Diagnostics;

namespace PriorityAsync;

internal sealed partial class DedicatedTimerTimeProvider
{
    /// <summary>The timer thread: fires each timer as it comes due, until disposal.</summary>
    private void Loop()
    {
        while (NextDue() is { } timer)
        {
            timer.Fire();
        }
    }

    /// <summary>
    /// Sleeps until the earliest armed timer is due (or a new earliest one wakes it) and takes that timer off the heap;
    /// <see langword="null"/> once the provider is disposed.
    /// </summary>
    private DedicatedTimer? NextDue()
    {
        lock (_gate)
        {
            while (!_disposed)
            {
                if (!_timers.TryPeekArmed(out var timer, out var due))
                {
                    Monitor.Wait(_gate);
                    continue;
                }

                var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due);
                if (wait > TimeSpan.Zero)
                {
                    Monitor.Wait(_gate, TimeSpan.FromTicks(Math.Clamp(wait.Ticks, MinimumWait.Ticks, MaximumWait.Ticks)));
                    continue;
                }

                _timers.RemoveFirst();
                timer.OnDequeuedLocked(Stopwatch.GetTimestamp());
                return timer;
            }

            return null;
        }
    }
}
