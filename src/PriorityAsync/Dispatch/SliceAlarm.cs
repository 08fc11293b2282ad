namespace PriorityAsync;

/// <summary>
/// A timer on the scheduler's clock, armed at the start of each slice of one worker and disarmed at its end; it
/// calls back only if the slice it was armed for is still running. The yield quantum and the stall watchdog use it.
/// </summary>
internal sealed class SliceAlarm : IDisposable
{
    private readonly SchedulerWorker _worker;
    private readonly TimeSpan _due;
    private readonly Action<SchedulerWorker, long> _onElapsed;
    private ITimer? _timer;
    private long _armedSlice;

    public SliceAlarm(SchedulerWorker worker, TimeSpan due, Action<SchedulerWorker, long> onElapsed)
    {
        _worker = worker;
        _due = due;
        _onElapsed = onElapsed;
    }

    public void Arm(long slice)
    {
        _timer ??= _worker.Scheduler.Clock.CreateTimer(static s => ((SliceAlarm)s!).OnElapsed(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        Volatile.Write(ref _armedSlice, slice);
        _timer.Change(_due, Timeout.InfiniteTimeSpan);
    }

    public void Disarm()
    {
        Volatile.Write(ref _armedSlice, 0);
        _timer?.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
    }

    public void Dispose() => _timer?.Dispose();

    private void OnElapsed()
    {
        var slice = Volatile.Read(ref _armedSlice);
        if (slice != 0 && slice == _worker.CurrentSlice)
        {
            _onElapsed(_worker, slice);
        }
    }
}
