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

    [ThreadStatic]
    private static SchedulerWorker? t_worker;

    private readonly Lane[] _lanes;
    private readonly Dictionary<string, Lane> _lanesByName;
    private readonly TimeProvider _clock;
    private readonly LaneTimeProvider _timeProvider;
    private readonly DedicatedTimerTimeProvider? _ownedTimerThread;
    private readonly LaneQueues _queues;

    // Every worker this scheduler ever had, for the dispatch counts (a few per scheduler: pool runners reuse theirs).
    private readonly List<SchedulerWorker> _allWorkers = [];
    private volatile AcceptanceState _acceptance;
    private int _outstandingOperations;
    private int _outstandingRuns;
    private long _rejectedWork;
    private TaskCompletionSource? _drained;

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
        _lanesByName = new Dictionary<string, Lane>(StringComparer.Ordinal);
        for (var rank = 0; rank < _lanes.Length; rank++)
        {
            var lane = new Lane(this, options.Lanes[rank], rank);
            _lanes[rank] = lane;
            _lanesByName.Add(lane.Name, lane);
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

        _queues = new LaneQueues(_lanes, _clock);
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

    /// <summary>
    /// Raised, on a thread-pool thread and before the work runs there, for each continuation, post, task or timer
    /// firing that reached a lane after the scheduler stopped taking work (see <see cref="RejectedWorkCount"/>).
    /// Handlers must not throw; an exception they throw is ignored.
    /// </summary>
    public event EventHandler<RejectedWorkEventArgs>? RejectedWork;

    /// <summary>
    /// Raised when work with no task to carry its exception throws: a posted callback or continuation (for example an
    /// async void method) of a <see cref="PriorityTaskScheduler"/>, and on any scheduler such work that ran on the
    /// thread pool after it was rejected. A <see cref="PriorityAsyncContext"/> does not raise it for work it runs
    /// itself: there the exception ends the run. Handlers must not block or throw; an exception they throw is ignored.
    /// </summary>
    public event EventHandler<SchedulerExceptionEventArgs>? UnhandledException;

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

    /// <summary>
    /// Gets how long a graceful stop waits for work started in the lanes (<see cref="Lane.Run(Func{Task})"/>, async
    /// void methods) to finish before it stops taking their continuations.
    /// </summary>
    public TimeSpan ShutdownTimeout { get; }

    /// <summary>Gets the clock the scheduler times slices, waits and timers with (the options' one, or its own timer thread).</summary>
    internal TimeProvider Clock => _clock;

    /// <summary>Gets the lock that guards the scheduler's state; derived schedulers park their threads on it.</summary>
    private protected object Gate { get; } = new();

    /// <summary>Gets the largest number of items of ordinary lanes this scheduler runs at once.</summary>
    internal abstract int MaximumConcurrencyLevel { get; }

    /// <summary>Gets the largest number of items of <paramref name="lane"/> this scheduler runs at once.</summary>
    internal virtual int GetMaximumConcurrencyLevel(Lane lane) => MaximumConcurrencyLevel;

    /// <inheritdoc />
    public override string ToString() => $"{GetType().Name} '{Name}'";

    /// <summary>Stops the dedicated timer thread, if the scheduler owns one, and stops publishing the lanes' metrics.</summary>
    private protected void ReleaseResources()
    {
        _ownedTimerThread?.Dispose();
        PriorityAsyncMetrics.Unregister(this);
    }
}
