using System.Diagnostics;
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
/// flight and its continuations finish (up to <see cref="PrioritySchedulerOptions.ShutdownTimeout"/>), then stops the workers.
/// </para>
/// </remarks>
[DebuggerDisplay("PriorityTaskScheduler {Name,nq}: {Lifetime,nq}, {Mode}, {WorkerCount} workers + {ReservedWorkerCount} reserved; searching {_searchingWorkers}, parked {_parkedWorkers}, pending wakes {_pendingWakes}, idle reserved {_idleReserved}, runners {_activeRunners}, exited {_exitedWorkers}")]
public sealed class PriorityTaskScheduler : PriorityScheduler, IAsyncDisposable
{
    private readonly SchedulerCompletion _completion = new();
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
    internal int WorkerCount { get; }

    /// <summary>Gets how many extra workers run only <see cref="ReservedLane"/> and the lanes more urgent than it.</summary>
    internal int ReservedWorkerCount { get; }

    /// <summary>Gets the least urgent lane the reserved workers run.</summary>
    internal LanePriority ReservedLane { get; }

    /// <summary>Gets the scheduling priority of the ordinary workers (see <see cref="PriorityTaskSchedulerOptions.OrdinaryWorkerPriority"/>).</summary>
    internal ThreadPriority OrdinaryWorkerPriority { get; }

    /// <summary>Gets where the workers run.</summary>
    internal PriorityWorkerMode Mode { get; }

    /// <summary>
    /// Gets a task that completes when the scheduler has stopped after <see cref="Complete"/> or disposal. It is
    /// faulted with every exception reported through <see cref="PriorityScheduler.UnhandledException"/> until then.
    /// </summary>
    [SuppressMessage("Usage", "VSTHRD003:Avoid awaiting foreign Tasks", Justification = "The task of the type's own SchedulerCompletion (RunContinuationsAsynchronously), completed only by the type itself; no JoinableTaskFactory is involved, so the foreign-task deadlock this rule guards against cannot occur.")]
    public Task Completion => _completion.Task;

    /// <inheritdoc />
    internal override int MaximumConcurrencyLevel => WorkerCount;

    /// <inheritdoc />
    internal override int GetMaximumConcurrencyLevel(Lane lane) =>
        lane.Priority.Rank <= ReservedLane.Rank ? WorkerCount + ReservedWorkerCount : WorkerCount;

    /// <inheritdoc />
    private protected override void OnCallbackException(Lane lane, Exception exception)
    {
        _completion.Report(exception);
        RaiseUnhandledException(lane, exception);
    }

    /// <summary>
    /// Stops the scheduler gracefully. New work (<see cref="Lane.Run(Func{Task})"/>) is taken only from the scheduler's
    /// own threads; continuations, posts and timer firings of work in flight are still taken from any thread until
    /// every lane run and async void operation has finished, or <see cref="PrioritySchedulerOptions.ShutdownTimeout"/> has
    /// passed. Then the items already queued run, the workers stop and <see cref="Completion"/> completes; work that
    /// arrives later is rejected (see <see cref="PriorityScheduler.RejectedWork"/>). Returns at once; safe to call from
    /// any thread, more than once.
    /// </summary>
    public void Complete() => BeginGracefulStop();

    /// <summary>
    /// Completes the scheduler (see <see cref="Complete"/>) and, unless called from one of its own workers, waits until
    /// it has stopped. Never throws the work's exceptions (see <see cref="Completion"/>). Called from inside a lane it
    /// only signals, so it never deadlocks.
    /// </summary>
    public override void Dispose()
    {
        BeginDispose();
        _completion.WaitUnless(IsWorkerThread);
    }

    /// <summary>
    /// Completes the scheduler (see <see cref="Complete"/>) and waits asynchronously until it has stopped. Called from
    /// inside a lane it only signals and returns at once (the caller's own work is part of what the stop waits for).
    /// </summary>
    /// <returns>A task that completes when the scheduler has stopped, or at once from inside a lane.</returns>
    public ValueTask DisposeAsync()
    {
        BeginDispose();
        return _completion.WaitUnlessAsync(IsWorkerThread);
    }

    [SuppressMessage("Design", "MA0051:Method is too long", Justification = "A worker loop keeps its searching/parked counting protocol in one place so that the invariants can be read and checked as a whole; splitting it would scatter them across methods.")]
    private void DedicatedWorkerLoop()
    {
        if (OrdinaryWorkerPriority != ThreadPriority.Normal)
        {
            WorkerThreadPriority.ApplyToCurrentThread(OrdinaryWorkerPriority);
        }

        var worker = new SchedulerWorker(this);
        var finish = false;
        var searching = false;
        using (EnterWorker(worker))
        {
            while (true)
            {
                if (TryDequeue(worker, out var item, out var lane))
                {
                    if (searching)
                    {
                        searching = false;
                        Interlocked.Decrement(ref _searchingWorkers);
                    }

                    ShareRemainingWork();
                    Execute(worker, lane, item);
                    continue;
                }

                worker.LeaveLaneContext();
                if (Lifetime.IsClosing && AreLanesEmpty())
                {
                    if (searching)
                    {
                        Interlocked.Decrement(ref _searchingWorkers);
                    }

                    lock (Gate)
                    {
                        finish = ExitWorkerLocked();
                    }

                    break;
                }

                if (!searching)
                {
                    searching = true;
                    Interlocked.Increment(ref _searchingWorkers);
                    if (Search())
                    {
                        continue;
                    }
                }

                searching = false;
                Interlocked.Decrement(ref _searchingWorkers);
                Park();
                searching = true; // a waker counted this worker as searching (or a close woke it: it looks once more)
            }
        }

        worker.Dispose();
        if (finish)
        {
            // Outside the lock: Finish joins the timer thread, which may be waiting for the lock to enqueue a firing.
            Finish();
        }
    }

    /// <summary>Sleeps in <see cref="PriorityScheduler.Gate"/> until a waker pulses, unless work or a close is already there.</summary>
    private void Park()
    {
        lock (Gate)
        {
            Interlocked.Increment(ref _parkedWorkers);
            if (IsReady(AllLanes) || Lifetime.IsClosing)
            {
                Interlocked.Decrement(ref _parkedWorkers);
                Interlocked.Increment(ref _searchingWorkers);
                AssertInvariantsLocked();
                return;
            }

            AssertInvariantsLocked();
            Monitor.Wait(Gate);
            Interlocked.Decrement(ref _parkedWorkers);
            if (_pendingWakes > 0)
            {
                _pendingWakes--; // the waker already counted this worker as searching
            }
            else
            {
                Interlocked.Increment(ref _searchingWorkers); // woken by a close
            }

            AssertInvariantsLocked();
        }
    }

    /// <summary>
    /// The loop of a reserved worker: it takes only items of the reserved lanes, never spins, and sleeps on its own
    /// semaphore, so a wake-up meant for an ordinary worker never lands on it (and is never lost).
    /// </summary>
    private void ReservedWorkerLoop()
    {
        var worker = new SchedulerWorker(this);
        var finish = false;
        using (EnterWorker(worker))
        {
            while (true)
            {
                if (TryDequeue(worker, _reservedLanes, out var item, out var lane))
                {
                    Execute(worker, lane, item);
                    continue;
                }

                worker.LeaveLaneContext();
                if (Lifetime.IsClosing && AreLanesEmpty())
                {
                    lock (Gate)
                    {
                        finish = ExitWorkerLocked();
                    }

                    break;
                }

                lock (Gate)
                {
                    Interlocked.Increment(ref _idleReserved);
                    if (IsReady(_reservedLanes) || Lifetime.IsClosing)
                    {
                        Interlocked.Decrement(ref _idleReserved);
                        AssertInvariantsLocked();
                        continue;
                    }

                    AssertInvariantsLocked();
                }

                _reservedWake.Wait();
            }
        }

        worker.Dispose();
        if (finish)
        {
            Finish();
        }
    }

    [SuppressMessage("Design", "MA0051:Method is too long", Justification = "A worker loop keeps its searching/parked counting protocol in one place so that the invariants can be read and checked as a whole; splitting it would scatter them across methods.")]
    private void ThreadPoolRunner()
    {
        SchedulerWorker worker;
        lock (Gate)
        {
            worker = _spareWorkers.Count > 0 ? _spareWorkers.Pop() : new SchedulerWorker(this);
        }

        var finish = false;
        using (EnterWorker(worker))
        {
            while (true)
            {
                if (TryDequeue(worker, out var item, out var lane))
                {
                    ShareRemainingWork();
                    Execute(worker, lane, item);
                    continue;
                }

                Interlocked.Increment(ref _searchingWorkers);
                var found = !Lifetime.IsClosing && Search();
                Interlocked.Decrement(ref _searchingWorkers);
                if (found)
                {
                    continue;
                }

                Interlocked.Decrement(ref _activeRunners);
                if (IsReady(AllLanes) && !Lifetime.IsClosing && TryClaimRunnerSlot())
                {
                    continue; // work landed after the last look, and this runner may take it
                }

                if (Lifetime.IsClosing)
                {
                    if (!AreLanesEmpty() && TryClaimRunnerSlot())
                    {
                        continue;
                    }

                    lock (Gate)
                    {
                        // The reserved workers exit only once no runner is left: let them look again.
                        WakeAllWorkersLocked();
                        finish = Volatile.Read(ref _activeRunners) == 0 && _exitedWorkers == _threads.Length && TryMarkFinishedLocked();
                    }
                }

                break;
            }

            worker.LeaveLaneContext();
        }

        // The worker goes back to the spares for the next runner, unless the scheduler has finished: once finished,
        // no runner will take it, and Finish, which disposes the spares, may already have looked (another runner or a
        // reserved worker can finish the scheduler between this runner counting itself out and this point). So it
        // is disposed here, with its slice alarms, which are timers on the scheduler's clock.
        bool spare;
        lock (Gate)
        {
            spare = !Lifetime.HasFinished;
            if (spare)
            {
                _spareWorkers.Push(worker);
            }
        }

        if (!spare)
        {
            worker.Dispose();
        }

        if (finish)
        {
            Finish();
        }
    }

    /// <summary>Looks for work for a while without sleeping; true when some is ready.</summary>
    private bool Search()
    {
        var spinner = default(SpinWait);
        for (var i = 0; i < SearchSpins; i++)
        {
            if (IsReady(AllLanes) || Lifetime.IsClosing)
            {
                return true;
            }

            spinner.SpinOnce(sleep1Threshold: -1);
        }

        return IsReady(AllLanes);
    }

    /// <inheritdoc />
    /// <remarks>
    /// Wakes a worker only when none is already awake and searching: in a burst, the worker that is looking takes the
    /// items one after another, and a second one is woken by the first when it sees more work behind its own item.
    /// Lease work that finds every ordinary worker busy wakes a reserved worker.
    /// </remarks>
    private protected override void OnWorkAvailable(int rank)
    {
        if (rank != AnyLane && rank <= ReservedLane.Rank && Volatile.Read(ref _idleReserved) > 0
            && (Mode == PriorityWorkerMode.ThreadPool || Volatile.Read(ref _searchingWorkers) + Volatile.Read(ref _parkedWorkers) == 0))
        {
            WakeReservedWorker();
        }

        if (Volatile.Read(ref _searchingWorkers) > 0)
        {
            return;
        }

        WakeOrdinaryWorker();
    }

    /// <summary>Wakes a parked dedicated worker, or starts a thread-pool runner, to look for work.</summary>
    private void WakeOrdinaryWorker()
    {
        if (Mode == PriorityWorkerMode.DedicatedThreads)
        {
            WakeParkedWorker();
        }
        else
        {
            TryStartRunner();
        }
    }

    private void WakeParkedWorker()
    {
        if (Volatile.Read(ref _parkedWorkers) == 0)
        {
            return;
        }

        lock (Gate)
        {
            if (_parkedWorkers > _pendingWakes)
            {
                _pendingWakes++;
                Interlocked.Increment(ref _searchingWorkers); // counts as searching from now: later posts wake no one
                Monitor.Pulse(Gate);
            }

            AssertInvariantsLocked();
        }
    }

    private void WakeReservedWorker()
    {
        lock (Gate)
        {
            if (_idleReserved > 0)
            {
                // The waker claims the worker, so two items never count on the same one.
                Volatile.Write(ref _idleReserved, _idleReserved - 1);
                _reservedWake.Release();
            }

            AssertInvariantsLocked();
        }
    }

    /// <summary>Wakes every sleeping worker, ordinary and reserved, to look at the queues and the scheduler's state again.</summary>
    private void WakeAllWorkersLocked()
    {
        Monitor.PulseAll(Gate);
        if (_idleReserved > 0)
        {
            _reservedWake.Release(_idleReserved);
            Volatile.Write(ref _idleReserved, 0);
        }

        AssertInvariantsLocked();
    }

    /// <summary>
    /// After taking an item, wakes another worker when more work waits and nobody is looking for it. Lease work left
    /// behind wakes an idle reserved worker even when an ordinary worker is searching: the poster may have counted on
    /// this worker while it was still searching, and it is about to run a slice instead.
    /// </summary>
    private void ShareRemainingWork()
    {
        if (Volatile.Read(ref _idleReserved) > 0 && IsReady(_reservedLanes))
        {
            WakeReservedWorker();
        }

        if (IsReady(AllLanes) && Volatile.Read(ref _searchingWorkers) == 0)
        {
            WakeOrdinaryWorker();
        }
    }

    /// <summary>Starts a thread-pool runner unless <see cref="PriorityTaskSchedulerOptions.WorkerCount"/> are active.</summary>
    private bool TryStartRunner()
    {
        if (!TryClaimRunnerSlot())
        {
            return false;
        }

        ThreadPool.UnsafeQueueUserWorkItem(static s => ((PriorityTaskScheduler)s!).ThreadPoolRunner(), this);
        return true;
    }

    /// <summary>
    /// Counts one more runner as active unless <see cref="PriorityTaskSchedulerOptions.WorkerCount"/> already are: for
    /// a runner about to start, and for a runner that counted itself out and found work after all.
    /// </summary>
    private bool TryClaimRunnerSlot()
    {
        var active = Volatile.Read(ref _activeRunners);
        while (active < WorkerCount)
        {
            var seen = Interlocked.CompareExchange(ref _activeRunners, active + 1, active);
            if (seen == active)
            {
                return true;
            }

            active = seen;
        }

        return false;
    }

    /// <summary>
    /// Called once the lane runs have finished or the shutdown timeout passed and the scheduler closed: let the
    /// workers run what is queued and stop. With no worker thread and no runner active, the scheduler finishes here.
    /// </summary>
    private protected override void OnClosedAfterDrain()
    {
        var finishNow = false;
        lock (Gate)
        {
            WakeAllWorkersLocked();
        }

        if (_threads.Length == 0)
        {
            if (!AreLanesEmpty())
            {
                TryStartRunner(); // a runner will run what is left and finish
                return;
            }

            lock (Gate)
            {
                finishNow = Volatile.Read(ref _activeRunners) == 0 && TryMarkFinishedLocked();
            }
        }

        if (finishNow)
        {
            Finish();
        }
    }

    /// <summary>Counts a worker thread out; true for the last one, which then finishes the scheduler.</summary>
    private bool ExitWorkerLocked()
    {
        WakeAllWorkersLocked();
        return ++_exitedWorkers == _threads.Length && Volatile.Read(ref _activeRunners) == 0 && TryMarkFinishedLocked();
    }

    private bool TryMarkFinishedLocked()
    {
        AssertInvariantsLocked();
        return Lifetime.TryFinish();
    }

    /// <summary>Stops the timer thread and completes <see cref="Completion"/>. Runs once, outside the lock.</summary>
    private void Finish()
    {
        RejectStragglers();
        ReleaseResources();
        lock (Gate)
        {
            while (_spareWorkers.Count > 0)
            {
                _spareWorkers.Pop().Dispose();
            }
        }

        _completion.Complete();
    }

    /// <summary>
    /// Checks, in debug builds and under <see cref="PriorityScheduler.Gate"/>, that the worker counters agree: what
    /// the lock guards (<c>_parkedWorkers</c>, <c>_pendingWakes</c>, <c>_idleReserved</c>, <c>_exitedWorkers</c>)
    /// exactly, and the counters changed without it (<c>_searchingWorkers</c>, <c>_activeRunners</c>)
    /// within the bounds that hold at every moment: each worker counts itself at most once, and a pending wake-up is a
    /// searching worker the waker counted for a parked one.
    /// </summary>
    [Conditional("DEBUG")]
    private void AssertInvariantsLocked()
    {
        Debug.Assert(Monitor.IsEntered(Gate), "The worker counters are checked under the scheduler's Gate.");
        var dedicated = Mode == PriorityWorkerMode.DedicatedThreads ? WorkerCount : 0;
        Debug.Assert(_pendingWakes >= 0 && _pendingWakes <= _parkedWorkers, $"0 <= pending wakes ({_pendingWakes}) <= parked workers ({_parkedWorkers})");
        Debug.Assert(_parkedWorkers <= dedicated, $"parked workers ({_parkedWorkers}) <= dedicated workers ({dedicated})");
        var searching = Volatile.Read(ref _searchingWorkers);
        Debug.Assert(searching >= _pendingWakes && searching <= WorkerCount, $"pending wakes ({_pendingWakes}) <= searching workers ({searching}) <= WorkerCount ({WorkerCount})");
        Debug.Assert(_idleReserved >= 0 && _idleReserved <= ReservedWorkerCount, $"0 <= idle reserved workers ({_idleReserved}) <= ReservedWorkerCount ({ReservedWorkerCount})");
        var runners = Volatile.Read(ref _activeRunners);
        Debug.Assert(runners >= 0 && runners <= WorkerCount && (runners == 0 || Mode == PriorityWorkerMode.ThreadPool), $"0 <= active runners ({runners}) <= WorkerCount ({WorkerCount}), and runners only in thread-pool mode");
        Debug.Assert(_exitedWorkers >= 0 && _exitedWorkers <= _threads.Length, $"0 <= exited workers ({_exitedWorkers}) <= threads ({_threads.Length})");
        Debug.Assert(!Lifetime.HasFinished || _exitedWorkers == _threads.Length, $"a finished scheduler has no worker thread left ({_exitedWorkers} of {_threads.Length} exited)");
    }
}
