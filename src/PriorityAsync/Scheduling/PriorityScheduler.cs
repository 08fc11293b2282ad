using System.Diagnostics;

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
[DebuggerDisplay("{GetType().Name,nq} {Name,nq}: {Lifetime,nq}")]
public abstract partial class PriorityScheduler : IDisposable
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

    private protected PriorityScheduler(PrioritySchedulerOptions? options, string defaultNamePrefix)
    {
        options ??= new PrioritySchedulerOptions();
        options.Validate();
        Lifetime = new SchedulerLifetime(this, Gate);
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
    internal event EventHandler<StallDetectedEventArgs>? StallInProgress;

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
    internal TimeSpan? YieldQuantum { get; }

    /// <summary>Gets the slice length from which a slice counts as a stall, or <see langword="null"/>.</summary>
    internal TimeSpan? StallThreshold { get; }

    /// <summary>
    /// Gets how long a graceful stop waits for work started in the lanes (<see cref="Lane.Run(Func{Task})"/>, async
    /// void methods) to finish before it stops taking their continuations.
    /// </summary>
    internal TimeSpan ShutdownTimeout { get; }

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

    /// <summary>
    /// Stops the scheduler and releases what it owns (its dedicated timer thread, its metrics registration). Whether
    /// it waits for work in flight is the derived type's: <see cref="PriorityTaskScheduler.Dispose"/> waits for its
    /// workers, <see cref="PriorityAsyncContext.Dispose"/> takes effect when its run ends, and
    /// <see cref="HostedPriorityScheduler.Dispose"/> waits for its host to run what is queued. Safe to call more than once.
    /// </summary>
    public abstract void Dispose();

    /// <summary>Stops the dedicated timer thread, if the scheduler owns one, and stops publishing the lanes' metrics.</summary>
    private protected void ReleaseResources()
    {
        _ownedTimerThread?.Dispose();
        PriorityAsyncMetrics.Unregister(this);
    }

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

    /// <summary>Gets the scheduler running the calling thread's current item, or <see langword="null"/> outside any.</summary>
    public static PriorityScheduler? Current => t_worker?.Scheduler;

    /// <summary>Gets the lane of the calling thread's current item, or <see langword="null"/> outside any scheduler.</summary>
    public static Lane? CurrentLane => t_worker?.CurrentLane;

    /// <summary>
    /// Returns an awaitable that always yields and resumes the rest of the method in the lane
    /// <paramref name="priority"/> of the current scheduler. Queuing costs O(1) whatever the backlog.
    /// </summary>
    /// <param name="priority">The lane to continue in.</param>
    /// <returns>The awaitable.</returns>
    /// <exception cref="InvalidOperationException">The calling code is not running in a PriorityAsync scheduler.</exception>
    /// <exception cref="ArgumentOutOfRangeException">The current scheduler has no lane of that rank.</exception>
    public static LaneAwaitable YieldTo(LanePriority priority)
    {
        var scheduler = Current ?? throw NotInScheduler(nameof(YieldTo));
        return new LaneAwaitable(scheduler.GetLane(priority));
    }

    /// <summary>
    /// Returns an awaitable that yields only when <see cref="ShouldYield"/> is true, and then resumes in the same lane
    /// behind the items already waiting there. When no yield is needed, awaiting it completes synchronously.
    /// </summary>
    /// <returns>The awaitable.</returns>
    /// <exception cref="InvalidOperationException">The calling code is not running in a PriorityAsync scheduler.</exception>
    public static YieldIfNeededAwaitable YieldIfNeeded()
    {
        var worker = t_worker;
        if (worker?.CurrentLane is not { } lane)
        {
            throw NotInScheduler(nameof(YieldIfNeeded));
        }

        return new YieldIfNeededAwaitable(lane);
    }

    private static InvalidOperationException NotInScheduler(string member) => new(
        $"PriorityScheduler.{member} must be called from code running in a PriorityAsync scheduler. Start one with " +
        "PriorityAsyncContext.Run(...) (one thread) or run the code in a lane of a PriorityTaskScheduler " +
        "(scheduler.GetLane(...).Run(...)); after ConfigureAwait(false), come back with await lane.SwitchTo().");

    /// <summary>Gets whether the calling thread is running this scheduler's work.</summary>
    internal bool IsWorkerThread => ReferenceEquals(t_worker?.Scheduler, this);

    /// <summary>Gets the lane the calling thread is running for this scheduler, or <see langword="null"/>.</summary>
    internal Lane? CurrentLaneOnThisThread
    {
        get
        {
            var worker = t_worker;
            return worker is not null && ReferenceEquals(worker.Scheduler, this) ? worker.CurrentLane : null;
        }
    }

    /// <summary>Makes <paramref name="previous"/> the calling thread's worker again (the end of a <see cref="WorkerScope"/>).</summary>
    internal static void RestoreWorker(SchedulerWorker? previous) => t_worker = previous;

    /// <summary>Adds <paramref name="worker"/> to the workers whose dispatch counts <see cref="GetDispatchedCount"/> sums.</summary>
    internal void RegisterWorker(SchedulerWorker worker)
    {
        lock (_allWorkers)
        {
            _allWorkers.Add(worker);
        }
    }

    /// <summary>Gets the items taken from the lane of rank <paramref name="rank"/> to run, summed over the workers.</summary>
    internal long GetDispatchedCount(int rank)
    {
        lock (_allWorkers)
        {
            var total = 0L;
            foreach (var worker in _allWorkers)
            {
                total += worker.GetDispatched(rank);
            }

            return total;
        }
    }

    /// <summary>Makes the calling thread a worker of this scheduler until the returned scope is disposed.</summary>
    private protected static WorkerScope EnterWorker(SchedulerWorker worker)
    {
        var previous = t_worker;
        t_worker = worker;
        return new WorkerScope(worker, previous);
    }
}
