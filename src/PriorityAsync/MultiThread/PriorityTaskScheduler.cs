using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>
/// A multi-thread priority scheduler: <see cref="PriorityTaskSchedulerOptions.WorkerCount"/> workers share the lanes
/// and each always takes the oldest ready item of the most urgent non-empty lane.
/// </summary>
/// <remarks>
/// <para>
/// With <see cref="PriorityWorkerMode.DedicatedThreads"/> (the default) the workers are threads of the scheduler's
/// own, so lease-lane work keeps running while the .NET thread pool is starved. With
/// <see cref="PriorityWorkerMode.ThreadPool"/> the workers are thread-pool runners, at most <c>WorkerCount</c> at a time.
/// </para>
/// <para>
/// Start work with <c>scheduler.GetLane(LanePriority.Processing).Run(...)</c>. An exception thrown by a posted callback
/// that has no task to carry it raises <see cref="PriorityScheduler.UnhandledException"/> and faults
/// <see cref="Completion"/>; the workers keep running. <see cref="Complete"/> stops new work from outside, lets work in
/// flight and its continuations finish (up to <see cref="PriorityScheduler.ShutdownTimeout"/>), then stops the workers.
/// </para>
/// </remarks>
public sealed partial class PriorityTaskScheduler : PriorityScheduler, IDisposable, IAsyncDisposable
{
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ConcurrentQueue<Exception> _exceptions = new();
    private readonly Thread[] _threads;
    private readonly Stack<SchedulerWorker> _spareWorkers = new();
    private readonly SemaphoreSlim _reservedWake = new(0);
    private readonly int _reservedLanes;
    private int _parkedWorkers;
    private int _pendingWakes;
    private int _searchingWorkers;
    private int _idleReserved;
    private int _activeRunners;
    private int _exitedWorkers;
    private bool _finished;
    private bool _disposeRequested;

    /// <summary>How many times a worker that ran out of work looks again before it parks (about 10–50 µs).</summary>
    private const int SearchSpins = 64;

    /// <summary>Creates the scheduler and starts its workers.</summary>
    /// <param name="options">The options; <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentException">An option breaks its rule; the exception names it.</exception>
    public PriorityTaskScheduler(PriorityTaskSchedulerOptions? options = null)
        : base(options ??= new PriorityTaskSchedulerOptions(), nameof(PriorityTaskScheduler)) // one options object for both
    {
        WorkerCount = options.WorkerCount;
        Mode = options.Mode;
        ReservedWorkerCount = options.ReservedWorkerCount;
        ReservedLane = options.ReservedLane;
        OrdinaryWorkerPriority = options.OrdinaryWorkerPriority;
        _reservedLanes = (int)((2L << ReservedLane.Rank) - 1);
        var general = Mode == PriorityWorkerMode.DedicatedThreads ? WorkerCount : 0;
        _threads = new Thread[general + ReservedWorkerCount];
        for (var i = 0; i < _threads.Length; i++)
        {
            var reserved = i >= general;
            _threads[i] = new Thread(reserved ? ReservedWorkerLoop : DedicatedWorkerLoop)
            {
                IsBackground = true,
                Name = reserved ? $"{Name} reserved worker {i - general + 1}" : $"{Name} worker {i + 1}",

                // A reserved worker should get a core the moment lease work wakes it, even when the ordinary workers spin
                // on every core. Windows honours this; on Linux .NET leaves the thread's nice value as it is.
                Priority = reserved ? ThreadPriority.Highest : OrdinaryWorkerPriority,
            };
        }

        foreach (var thread in _threads)
        {
            thread.Start();
        }
    }

    /// <summary>Gets how many items may run at once.</summary>
    public int WorkerCount { get; }

    /// <summary>Gets how many extra workers run only <see cref="ReservedLane"/> and the lanes more urgent than it.</summary>
    public int ReservedWorkerCount { get; }

    /// <summary>Gets the least urgent lane the reserved workers run.</summary>
    public LanePriority ReservedLane { get; }

    /// <summary>Gets the scheduling priority of the ordinary workers (see <see cref="PriorityTaskSchedulerOptions.OrdinaryWorkerPriority"/>).</summary>
    public ThreadPriority OrdinaryWorkerPriority { get; }

    /// <summary>Gets where the workers run.</summary>
    public PriorityWorkerMode Mode { get; }

    /// <summary>
    /// Gets a task that completes when the scheduler has stopped after <see cref="Complete"/> or disposal. It is
    /// faulted with every exception reported through <see cref="PriorityScheduler.UnhandledException"/> until then.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of the type's own TaskCompletionSource (RunContinuationsAsynchronously), completed only by the type itself; no JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    public Task Completion => _completion.Task;

    /// <inheritdoc />
    internal override int MaximumConcurrencyLevel => WorkerCount;

    /// <inheritdoc />
    internal override int GetMaximumConcurrencyLevel(Lane lane) =>
        lane.Priority <= ReservedLane ? WorkerCount + ReservedWorkerCount : WorkerCount;

    /// <inheritdoc />
    private protected override void OnCallbackException(Lane lane, Exception exception)
    {
        _exceptions.Enqueue(exception);
        RaiseUnhandledException(lane, exception);
    }
}
