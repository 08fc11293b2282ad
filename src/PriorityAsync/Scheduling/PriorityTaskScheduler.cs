using System.Collections.Concurrent;

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
/// that has no task to carry it raises <see cref="UnhandledException"/> and faults <see cref="Completion"/>; the
/// workers keep running. <see cref="Complete"/> stops work from outside, lets work in flight and its continuations
/// finish, then stops the workers.
/// </para>
/// </remarks>
public sealed partial class PriorityTaskScheduler : PriorityScheduler, IDisposable, IAsyncDisposable
{
    private readonly TaskCompletionSource _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly ConcurrentQueue<Exception> _exceptions = new();
    private readonly Thread[] _threads;
    private readonly Stack<Worker> _spareWorkers = new();
    private int _idleWorkers;
    private int _busyWorkers;
    private int _activeRunners;
    private int _exitedWorkers;
    private bool _finished;
    private bool _disposeRequested;

    /// <summary>Creates the scheduler and starts its workers.</summary>
    /// <param name="options">The options; <see langword="null"/> for the defaults.</param>
    /// <exception cref="ArgumentException">An option breaks its rule; the exception names it.</exception>
    public PriorityTaskScheduler(PriorityTaskSchedulerOptions? options = null)
        : base(options ?? new PriorityTaskSchedulerOptions(), nameof(PriorityTaskScheduler))
    {
        options ??= new PriorityTaskSchedulerOptions();
        WorkerCount = options.WorkerCount;
        Mode = options.Mode;
        if (Mode == PriorityWorkerMode.DedicatedThreads)
        {
            _threads = new Thread[WorkerCount];
            for (var i = 0; i < _threads.Length; i++)
            {
                _threads[i] = new Thread(DedicatedWorkerLoop)
                {
                    IsBackground = true,
                    Name = $"{Name} worker {i + 1}",
                };
                _threads[i].Start();
            }
        }
        else
        {
            _threads = [];
        }
    }

    /// <summary>Raised on the worker thread when a posted callback throws. Handlers must not block.</summary>
    public event EventHandler<SchedulerExceptionEventArgs>? UnhandledException;

    /// <summary>Gets how many items may run at once.</summary>
    public int WorkerCount { get; }

    /// <summary>Gets where the workers run.</summary>
    public PriorityWorkerMode Mode { get; }

    /// <summary>
    /// Gets a task that completes when the scheduler has stopped after <see cref="Complete"/> or disposal. It is
    /// faulted with every exception reported through <see cref="UnhandledException"/>.
    /// </summary>
    public Task Completion => _completion.Task;

    /// <inheritdoc />
    internal override int MaximumConcurrencyLevel => WorkerCount;

    /// <summary>
    /// Stops accepting work from outside the scheduler. Work in flight and the continuations it queues still run;
    /// when no work is left, the workers stop and <see cref="Completion"/> completes. Safe to call from any thread,
    /// more than once.
    /// </summary>
    public void Complete()
    {
        var finishNow = false;
        lock (Gate)
        {
            if (Acceptance == AcceptanceState.Open)
            {
                Acceptance = AcceptanceState.Draining;
            }

            Monitor.PulseAll(Gate);
            if (Mode == PriorityWorkerMode.ThreadPool && _activeRunners == 0)
            {
                finishNow = TryMarkFinishedLocked();
            }
        }

        if (finishNow)
        {
            Finish();
        }
    }

    /// <summary>
    /// Completes the scheduler and, unless called from one of its own workers, waits until it has stopped. Never
    /// throws the work's exceptions (see <see cref="Completion"/>); never deadlocks when called from inside a lane.
    /// </summary>
    public void Dispose()
    {
        RequestDispose();
        if (!IsWorkerThread)
        {
            Completion.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing).GetAwaiter().GetResult();
        }
    }

    /// <summary>Completes the scheduler and waits asynchronously until it has stopped.</summary>
    /// <returns>A task that completes when the scheduler has stopped.</returns>
    public async ValueTask DisposeAsync()
    {
        RequestDispose();
        await Completion.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
    }

    /// <inheritdoc />
    private protected override void OnCallbackException(Lane lane, Exception exception)
    {
        _exceptions.Enqueue(exception);
        try
        {
            UnhandledException?.Invoke(this, new SchedulerExceptionEventArgs(lane, exception));
        }
        catch (Exception handlerException)
        {
            _exceptions.Enqueue(handlerException);
        }
    }

    private void RequestDispose()
    {
        lock (Gate)
        {
            _disposeRequested = true;
        }

        Complete();
    }
}
