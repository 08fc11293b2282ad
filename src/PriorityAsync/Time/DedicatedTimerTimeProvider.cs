using System.Diagnostics;

namespace PriorityAsync;

/// <summary>
/// Real time whose timers fire on one dedicated thread instead of the .NET thread pool, so they stay punctual when
/// the pool is starved. Callbacks must be short: a <see cref="PriorityScheduler"/> only enqueues work from them.
/// </summary>
/// <remarks>
/// Disposal stops the thread but not the timers: each armed timer moves to a system timer that fires at the same due
/// time (on the thread pool), and timers created or changed afterwards are system timers, so no firing is ever lost.
/// </remarks>
internal sealed class DedicatedTimerTimeProvider : TimeProvider, IDisposable
{
    /// <summary>The shortest sleep: Monitor.Wait rounds to milliseconds.</summary>
    private static readonly TimeSpan MinimumWait = TimeSpan.FromMilliseconds(1);

    /// <summary>The longest sleep between checks; far-off timers are re-checked rather than waited for in one go.</summary>
    private static readonly TimeSpan MaximumWait = TimeSpan.FromHours(1);

    private readonly object _gate = new();
    private readonly TimerHeap<DedicatedTimer> _timers = new();
    private readonly Thread _thread;
    private bool _disposed;

    public DedicatedTimerTimeProvider(string name)
    {
        _thread = new Thread(Loop)
        {
            IsBackground = true,
            Name = $"{name} timers",

            // It only moves due timers into their lanes, and a renewal's timer should fire while workers spin on every
            // core. Windows honours this; on Linux .NET leaves the thread's nice value as it is.
            Priority = ThreadPriority.Highest,
        };
        _thread.Start();
    }

    /// <summary>Gets the lock that guards the heap and every timer's arming.</summary>
    internal object Gate => _gate;

    /// <summary>Gets whether the provider was disposed (its timers are system timers from then on); read under <see cref="Gate"/>.</summary>
    internal bool IsDisposedLocked => _disposed;

    public override ITimer CreateTimer(TimerCallback callback, object? state, TimeSpan dueTime, TimeSpan period)
    {
        ArgumentNullException.ThrowIfNull(callback);
        var timer = new DedicatedTimer(this, callback, state);
        timer.Change(dueTime, period);
        return timer;
    }

    public void Dispose()
    {
        lock (_gate)
        {
            _disposed = true;
            Monitor.PulseAll(_gate);
            foreach (var (timer, due) in _timers.TakeAllArmed())
            {
                timer.MoveToSystemTimerLocked(due);
            }
        }

        if (Thread.CurrentThread != _thread)
        {
            _thread.Join();
        }
    }

    /// <summary>Arms <paramref name="timer"/> for <paramref name="due"/> and wakes the thread when it is now the earliest.</summary>
    internal long ArmLocked(DedicatedTimer timer, long due)
    {
        var sequence = _timers.Arm(timer, due);
        if (_timers.IsFirst(timer))
        {
            Monitor.Pulse(_gate);
        }

        return sequence;
    }

    /// <summary>Records that a timer's heap entry became stale; call under <see cref="Gate"/>.</summary>
    internal void OnTimerDisarmedLocked() => _timers.OnDisarmed();

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
