namespace PriorityAsync;

/// <summary>The per-thread state of a thread that runs a scheduler's items: its lane, its slice and its counts.</summary>
internal sealed partial class SchedulerWorker : IDisposable
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
}
