namespace PriorityAsync;

/// <summary>The per-thread state of a thread that runs a scheduler's items: its lane, its slice and its counts.</summary>
internal sealed class SchedulerWorker : IDisposable
{
    // Per worker, so that workers never share a counter's cache line on the dispatch path.
    private readonly long[] _dispatched;
    private readonly SliceAlarm? _quantumAlarm;
    private readonly SliceAlarm? _stallAlarm;
    private SynchronizationContext? _outerContext;
    private bool _inLaneContext;
    private long _slice;
    private long _sliceCounter;
    private long _sliceStart;
    private long _stallReportedSlice;
    private volatile bool _quantumExpired;

    public SchedulerWorker(PriorityScheduler scheduler)
    {
        Scheduler = scheduler;
        _dispatched = new long[scheduler.Lanes.Count];
        scheduler.RegisterWorker(this);
        if (scheduler.YieldQuantum is { } quantum)
        {
            _quantumAlarm = new SliceAlarm(this, quantum, static (w, _) => w._quantumExpired = true);
        }

        if (scheduler.StallThreshold is { } threshold)
        {
            _stallAlarm = new SliceAlarm(this, threshold, static (w, slice) => w.OnStallInProgress(slice));
        }
    }

    public PriorityScheduler Scheduler { get; }

    /// <summary>Gets or sets the lane of the item running on this worker, or <see langword="null"/> between items.</summary>
    public Lane? CurrentLane { get; set; }

    public bool QuantumExpired => _quantumExpired;

    /// <summary>Gets whether slices arm an alarm (a yield quantum or a stall threshold is set).</summary>
    public bool HasSliceAlarms => _quantumAlarm is not null || _stallAlarm is not null;

    /// <summary>Gets the number of the running slice, or 0 between slices.</summary>
    public long CurrentSlice => Volatile.Read(ref _slice);

    /// <summary>Counts one item of the lane of rank <paramref name="rank"/> taken by this worker; called by its own thread only.</summary>
    public void CountDispatched(int rank) => Volatile.Write(ref _dispatched[rank], _dispatched[rank] + 1);

    /// <summary>Gets how many items of the lane of rank <paramref name="rank"/> this worker took.</summary>
    public long GetDispatched(int rank) => Volatile.Read(ref _dispatched[rank]);

    public void Dispose()
    {
        _quantumAlarm?.Dispose();
        _stallAlarm?.Dispose();
    }

    /// <summary>
    /// Installs <paramref name="lane"/>'s synchronization context on the calling thread unless it is already
    /// current. The context stays installed after the item, so consecutive items of one lane pay for no switch;
    /// <see cref="LeaveLaneContext"/> puts back the thread's own context before anything else runs on it.
    /// </summary>
    public void EnterLaneContext(Lane lane)
    {
        var current = SynchronizationContext.Current;
        var laneContext = lane.SynchronizationContext;
        if (ReferenceEquals(current, laneContext))
        {
            return;
        }

        if (!_inLaneContext)
        {
            _outerContext = current;
            _inLaneContext = true;
        }

        SynchronizationContext.SetSynchronizationContext(laneContext);
    }

    /// <summary>Restores the synchronization context the thread had before <see cref="EnterLaneContext"/>.</summary>
    public void LeaveLaneContext()
    {
        if (_inLaneContext)
        {
            _inLaneContext = false;
            SynchronizationContext.SetSynchronizationContext(_outerContext);
            _outerContext = null;
        }
    }

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
