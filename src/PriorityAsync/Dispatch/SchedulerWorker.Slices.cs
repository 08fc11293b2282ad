namespace PriorityAsync;

internal sealed partial class SchedulerWorker
{
    public void BeginSlice(long start)
    {
        var slice = Interlocked.Increment(ref _sliceCounter);
        _sliceStart = start;
        Volatile.Write(ref _slice, slice);
        _quantumAlarm?.Arm(slice);
        _stallAlarm?.Arm(slice);
    }

    /// <summary>Ends the slice; returns whether the stall watchdog already reported it (then it is not counted again).</summary>
    public bool EndSlice()
    {
        var slice = _slice;
        Volatile.Write(ref _slice, 0);
        _quantumAlarm?.Disarm();
        _stallAlarm?.Disarm();
        _quantumExpired = false;
        return Volatile.Read(ref _stallReportedSlice) == slice;
    }

    /// <summary>Called on the clock's timer thread while a slice is still running past the stall threshold.</summary>
    private void OnStallInProgress(long slice)
    {
        if (CurrentLane is { } lane)
        {
            Volatile.Write(ref _stallReportedSlice, slice);
            Scheduler.ReportStallInProgress(lane, Scheduler.Clock.GetElapsedTime(_sliceStart));
        }
    }
}
