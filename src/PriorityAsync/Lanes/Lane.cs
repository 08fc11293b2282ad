using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>
/// One priority lane of a <see cref="PriorityScheduler"/>. The lane is both a <see cref="System.Threading.SynchronizationContext"/>
/// and a <see cref="System.Threading.Tasks.TaskScheduler"/>: code that runs in it and awaits comes back to it, so the
/// priority flows through ordinary async methods.
/// </summary>
/// <remarks>
/// <c>ConfigureAwait(false)</c> leaves the lane (and the scheduler): the continuation runs wherever the awaited
/// operation completes, usually on the .NET thread pool. Use <see cref="PriorityScheduler.YieldTo(LanePriority)"/> to
/// come back.
/// </remarks>
[DebuggerDisplay("Lane {Name,nq} (rank {Priority.Rank}): {QueueLength} queued, scheduler {Scheduler.Name,nq}")]
public sealed class Lane
{
    private readonly LaneSynchronizationContext _synchronizationContext;
    private readonly LaneTaskScheduler _taskScheduler;

    internal Lane(PriorityScheduler scheduler, LaneOptions options, int rank)
    {
        Scheduler = scheduler;
        Name = options.Name;
        StarvationBound = options.StarvationBound;
        Priority = LanePriority.FromRank(rank);
        MoreUrgentMask = (1 << rank) - 1;
        _synchronizationContext = new LaneSynchronizationContext(this);
        _taskScheduler = new LaneTaskScheduler(this);
        // HideScheduler: inside a lane, TaskScheduler.Current stays the default scheduler, in tasks and continuations
        // alike, so Task.Factory.StartNew and ContinueWith without a scheduler always go to the thread pool (as in
        // Nito.AsyncEx). Awaits keep the lane through SynchronizationContext.Current.
        TaskFactory = new TaskFactory(
            CancellationToken.None,
            TaskCreationOptions.DenyChildAttach | TaskCreationOptions.HideScheduler,
            TaskContinuationOptions.DenyChildAttach | TaskContinuationOptions.HideScheduler,
            _taskScheduler);
    }

    /// <summary>Gets the scheduler that owns the lane.</summary>
    public PriorityScheduler Scheduler { get; }

    /// <summary>Gets the lane's name.</summary>
    public string Name { get; }

    /// <summary>Gets the lane's priority (its rank; 0 is the most urgent).</summary>
    public LanePriority Priority { get; }

    /// <summary>Gets how long an item may wait before it overtakes more urgent lanes, or <see langword="null"/> for never.</summary>
    internal TimeSpan? StarvationBound { get; }

    /// <summary>Gets the lane's synchronization context: <see cref="System.Threading.SynchronizationContext.Post"/> queues into this lane.</summary>
    public SynchronizationContext SynchronizationContext => _synchronizationContext;

    /// <summary>Gets the lane's task scheduler: tasks started on it run in this lane.</summary>
    public TaskScheduler TaskScheduler => _taskScheduler;

    /// <summary>
    /// Gets a task factory whose tasks run in this lane. Its tasks hide the lane from <see cref="TaskScheduler.Current"/>.
    /// Unlike <see cref="Run(Func{Task})"/>, it never throws once the scheduler has stopped (it is also how
    /// continuations reach the lane): a task queued then runs on the thread pool and counts in
    /// <see cref="PriorityScheduler.RejectedWorkCount"/>.
    /// </summary>
    internal TaskFactory TaskFactory { get; }

    /// <summary>Gets the number of items waiting in the lane.</summary>
    internal int QueueLength => Scheduler.GetQueueLength(this);

    /// <summary>Gets the number of items taken from the lane to run.</summary>
    internal long DispatchedCount => Scheduler.GetDispatchedCount(Priority.Rank);

    /// <summary>
    /// Gets whether a lane more urgent than this one has ready work: two field reads, no thread-local lookup, so it
    /// is the cheapest should-yield check for a CPU-heavy loop that knows its lane
    /// (<c>var lane = PriorityScheduler.CurrentLane!;</c> once, then <c>if (lane.HasMoreUrgentWork)</c> per item).
    /// Unlike <see cref="PriorityScheduler.ShouldYield"/>, it ignores <see cref="PrioritySchedulerOptions.YieldQuantum"/>.
    /// </summary>
    public bool HasMoreUrgentWork => Scheduler.IsReady(MoreUrgentMask);

    /// <summary>Bit mask of the lanes more urgent than this one, matched against the scheduler's ready mask.</summary>
    internal int MoreUrgentMask { get; }

    /// <summary>Runs <paramref name="action"/> in this lane.</summary>
    /// <param name="action">The work.</param>
    /// <returns>A task that completes with the work.</returns>
    /// <exception cref="ObjectDisposedException">The scheduler has been disposed.</exception>
    /// <exception cref="InvalidOperationException">
    /// The scheduler has finished, or is shutting down and the caller is not one of its threads.
    /// </exception>
    [SuppressMessage("Usage", "VSTHRD200:Use Async suffix for async methods", Justification = "Named after Task.Run and TaskFactory.StartNew, which it mirrors for a lane: the BCL names a method that starts work and returns that work's task without the Async suffix, which marks a method that is itself the asynchronous operation. Kept for that reason.")]
    public Task Run(Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        Scheduler.StartTrackedRun();
        return Tracked(TaskFactory.StartNew(action));
    }

    /// <summary>
    /// Runs the asynchronous <paramref name="function"/> in this lane; its awaits come back to this lane. Until the
    /// returned task completes, a graceful stop of the scheduler waits for it (up to
    /// <see cref="PrioritySchedulerOptions.ShutdownTimeout"/>).
    /// </summary>
    /// <param name="function">The asynchronous work.</param>
    /// <returns>A task that completes with the work.</returns>
    /// <exception cref="ObjectDisposedException">The scheduler has been disposed.</exception>
    /// <exception cref="InvalidOperationException">
    /// The scheduler has finished, or is shutting down and the caller is not one of its threads.
    /// </exception>
    [SuppressMessage("Usage", "VSTHRD200:Use Async suffix for async methods", Justification = "Named after Task.Run and TaskFactory.StartNew, which it mirrors for a lane: the BCL names a method that starts work and returns that work's task without the Async suffix, which marks a method that is itself the asynchronous operation. Kept for that reason.")]
    public Task Run(Func<Task> function)
    {
        ArgumentNullException.ThrowIfNull(function);
        Scheduler.StartTrackedRun();
        return Tracked(TaskFactory.StartNew(function).Unwrap());
    }

    /// <summary>
    /// Runs the asynchronous <paramref name="function"/> in this lane; its awaits come back to this lane. Until the
    /// returned task completes, a graceful stop of the scheduler waits for it (up to
    /// <see cref="PrioritySchedulerOptions.ShutdownTimeout"/>).
    /// </summary>
    /// <typeparam name="T">The result type.</typeparam>
    /// <param name="function">The asynchronous work.</param>
    /// <returns>A task that completes with the work's result.</returns>
    /// <exception cref="ObjectDisposedException">The scheduler has been disposed.</exception>
    /// <exception cref="InvalidOperationException">
    /// The scheduler has finished, or is shutting down and the caller is not one of its threads.
    /// </exception>
    [SuppressMessage("Usage", "VSTHRD200:Use Async suffix for async methods", Justification = "Named after Task.Run and TaskFactory.StartNew, which it mirrors for a lane: the BCL names a method that starts work and returns that work's task without the Async suffix, which marks a method that is itself the asynchronous operation. Kept for that reason.")]
    public Task<T> Run<T>(Func<Task<T>> function)
    {
        ArgumentNullException.ThrowIfNull(function);
        Scheduler.StartTrackedRun();
        return Tracked(TaskFactory.StartNew(function).Unwrap());
    }

    /// <summary>
    /// Returns an awaitable that always yields and continues in this lane, from wherever the caller runs: another lane,
    /// the thread pool after <c>ConfigureAwait(false)</c>, or another scheduler.
    /// </summary>
    /// <returns>The awaitable.</returns>
    public LaneAwaitable SwitchTo() => new(this);

    /// <inheritdoc />
    public override string ToString() => $"{Name} (rank {Priority.Rank}) of {Scheduler.Name}";

    /// <summary>Runs <paramref name="function"/> in this lane without counting it as outstanding work (an entry point).</summary>
    internal Task RunEntryAsync(Func<Task> function) => TaskFactory.StartNew(function).Unwrap();

    /// <summary>Runs <paramref name="function"/> in this lane without counting it as outstanding work (an entry point).</summary>
    internal Task<T> RunEntryAsync<T>(Func<Task<T>> function) => TaskFactory.StartNew(function).Unwrap();

    private TTask Tracked<TTask>(TTask run)
        where TTask : Task
    {
        Scheduler.EndTrackedRunWhenDone(run);
        return run;
    }

    /// <summary>
    /// Counts work that the caller runs in this lane itself, without handing it to <see cref="Run(Func{Task})"/>, as
    /// outstanding until the returned <see cref="LaneWork"/> is disposed: a graceful stop of the scheduler waits for it
    /// as for a run's task (up to <see cref="PrioritySchedulerOptions.ShutdownTimeout"/>). For a component that starts
    /// many such pieces (a message pump starts one per message) it saves <c>Run</c>'s task and continuation.
    /// </summary>
    /// <returns>The work's count, ended by its first <see cref="LaneWork.Dispose"/>.</returns>
    /// <exception cref="ObjectDisposedException">The scheduler has been disposed.</exception>
    /// <exception cref="InvalidOperationException">
    /// The scheduler has finished, or is shutting down and the caller is not one of its threads.
    /// </exception>
    public LaneWork TrackWork()
    {
        Scheduler.StartTrackedRun();
        return new LaneWork(Scheduler);
    }
}
