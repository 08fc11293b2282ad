using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>
/// A scheduler with ordered priority lanes. It always runs the oldest ready item of the most urgent non-empty lane
/// (unless a lane's starvation bound says otherwise); each <see cref="Lane"/> is a synchronization context and a task
/// scheduler, so awaiting code keeps its lane.
/// </summary>
/// <remarks>
/// Two implementations: <see cref="PriorityAsyncContext"/> runs everything on one thread (the WinForms and asyncio
/// model, with optional virtual time); <see cref="PriorityTaskScheduler"/> runs lanes on several workers.
/// </remarks>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "Adding IDisposable to this public abstract base would change the public API. Its constructor is private protected and both derived types (PriorityAsyncContext, PriorityTaskScheduler) are IDisposable and dispose the owned timer thread through ReleaseResources.")]
public abstract partial class PriorityScheduler
{
    private static int s_instanceCount;

    private readonly Lane[] _lanes;
    private readonly Dictionary<string, Lane> _lanesByName;
    private readonly TimeProvider _clock;
    private readonly LaneTimeProvider _timeProvider;
    private readonly DedicatedTimerTimeProvider? _ownedTimerThread;

    private protected PriorityScheduler(PrioritySchedulerOptions? options, string defaultNamePrefix)
    {
        options ??= new PrioritySchedulerOptions();
        options.Validate();
        Name = string.IsNullOrWhiteSpace(options.Name)
            ? $"{defaultNamePrefix}-{Interlocked.Increment(ref s_instanceCount)}"
            : options.Name;
        YieldQuantum = options.YieldQuantum;
        StallThreshold = options.StallThreshold;
        ShutdownTimeout = options.ShutdownTimeout;

        _lanes = new Lane[options.Lanes.Count];
        _queues = new System.Collections.Concurrent.ConcurrentQueue<WorkItem>[_lanes.Length];
        _lanesByName = new Dictionary<string, Lane>(StringComparer.Ordinal);
        for (var rank = 0; rank < _lanes.Length; rank++)
        {
            var lane = new Lane(this, options.Lanes[rank], rank);
            _lanes[rank] = lane;
            _queues[rank] = new System.Collections.Concurrent.ConcurrentQueue<WorkItem>();
            _lanesByName.Add(lane.Name, lane);
            _hasStarvationBounds |= lane.StarvationBound is not null;
        }

        Lanes = Array.AsReadOnly(_lanes);
        if (options.TimeProvider is null)
        {
            _ownedTimerThread = new DedicatedTimerTimeProvider(Name);
            _clock = _ownedTimerThread;
        }
        else
        {
            _clock = options.TimeProvider;
        }

        _timeProvider = new LaneTimeProvider(this, _clock);
        PriorityAsyncMetrics.Register(this);
    }

    /// <summary>Raised on the worker thread after a slice held its thread for at least <see cref="StallThreshold"/>. Keep handlers short.</summary>
    public event EventHandler<StallDetectedEventArgs>? StallDetected;

    /// <summary>
    /// Raised on the clock's timer thread when a slice is still running <see cref="StallThreshold"/> after it started:
    /// the watchdog for a slice that may never end (a lease renewal blocked in a call that hangs). Its
    /// <see cref="StallDetectedEventArgs.Duration"/> is the time run so far; <see cref="StallDetected"/> follows if the
    /// slice ends. Handlers must be short and must not throw (an exception is ignored).
    /// </summary>
    public event EventHandler<StallDetectedEventArgs>? StallInProgress;

    /// <summary>Gets the scheduler's name.</summary>
    public string Name { get; }

    /// <summary>Gets the lanes, most urgent first; a lane's index is its rank.</summary>
    public IReadOnlyList<Lane> Lanes { get; }

    /// <summary>
    /// Gets the scheduler's clock. Its timers fire on the scheduler's own threads, in the lane that was current when
    /// the timer was created (the most urgent lane when created elsewhere), so
    /// <c>await Task.Delay(delay, scheduler.TimeProvider)</c> in the lease lane completes on time even when the .NET
    /// thread pool is starved.
    /// </summary>
    public TimeProvider TimeProvider => _timeProvider;

    /// <summary>Gets the slice length after which <see cref="ShouldYield"/> turns true, or <see langword="null"/>.</summary>
    public TimeSpan? YieldQuantum { get; }

    /// <summary>Gets the slice length from which a slice counts as a stall, or <see langword="null"/>.</summary>
    public TimeSpan? StallThreshold { get; }

    /// <summary>Gets the largest number of items of ordinary lanes this scheduler runs at once.</summary>
    internal abstract int MaximumConcurrencyLevel { get; }

    /// <summary>Gets the largest number of items of <paramref name="lane"/> this scheduler runs at once.</summary>
    internal virtual int GetMaximumConcurrencyLevel(Lane lane) => MaximumConcurrencyLevel;

    /// <summary>Gets the lane with the given priority.</summary>
    /// <param name="priority">The lane's priority.</param>
    /// <returns>The lane.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The scheduler has no lane of that rank.</exception>
    public Lane this[LanePriority priority] => GetLane(priority);

    /// <summary>Gets the lane with the given priority.</summary>
    /// <param name="priority">The lane's priority.</param>
    /// <returns>The lane.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The scheduler has no lane of that rank.</exception>
    public Lane GetLane(LanePriority priority) => GetLane(priority, nameof(priority));

    /// <summary>Gets the lane with the given priority; an unknown rank throws naming <paramref name="parameterName"/>.</summary>
    internal Lane GetLane(LanePriority priority, string parameterName)
    {
        if ((uint)priority.Rank >= (uint)_lanes.Length)
        {
            throw new ArgumentOutOfRangeException(parameterName, priority, $"The scheduler '{Name}' has {_lanes.Length} lane(s); the rank must be below {_lanes.Length}.");
        }

        return _lanes[priority.Rank];
    }

    /// <summary>Gets the lane with the given name.</summary>
    /// <param name="name">The lane's name.</param>
    /// <returns>The lane.</returns>
    /// <exception cref="ArgumentException">The scheduler has no lane of that name.</exception>
    public Lane GetLane(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        return _lanesByName.TryGetValue(name, out var lane)
            ? lane
            : throw new ArgumentException($"The scheduler '{Name}' has no lane named '{name}'; its lanes are {string.Join(", ", _lanes.Select(l => l.Name))}.", nameof(name));
    }

    /// <inheritdoc />
    public override string ToString() => $"{GetType().Name} '{Name}'";

    /// <summary>Stops the dedicated timer thread, if the scheduler owns one, and stops publishing the lanes' metrics.</summary>
    private protected void ReleaseResources()
    {
        _ownedTimerThread?.Dispose();
        PriorityAsyncMetrics.Unregister(this);
    }
}
