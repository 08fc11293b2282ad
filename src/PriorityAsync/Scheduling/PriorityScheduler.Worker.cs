namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    [ThreadStatic]
    private static Worker? t_worker;

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

    /// <summary>Makes the calling thread a worker of this scheduler until the returned scope is disposed.</summary>
    private protected WorkerScope EnterWorker(Worker worker)
    {
        var previous = t_worker;
        t_worker = worker;
        return new WorkerScope(worker, previous);
    }

    /// <summary>The per-thread state of a thread that runs a scheduler's items.</summary>
    private protected sealed class Worker
    {
        private ITimer? _quantumTimer;
        private SynchronizationContext? _outerContext;
        private bool _inLaneContext;
        private long _slice;
        private long _armedSlice;
        private volatile bool _quantumExpired;

        public Worker(PriorityScheduler scheduler)
        {
            Scheduler = scheduler;
        }

        public PriorityScheduler Scheduler { get; }

        /// <summary>Gets or sets the lane of the item running on this worker, or <see langword="null"/> between items.</summary>
        public Lane? CurrentLane { get; set; }

        public bool QuantumExpired => _quantumExpired;

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

        public void BeginSlice()
        {
            _slice++;
            if (Scheduler.YieldQuantum is { } quantum)
            {
                _quantumTimer ??= Scheduler._clock.CreateTimer(static s => ((Worker)s!).OnQuantumElapsed(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
                Volatile.Write(ref _armedSlice, _slice);
                _quantumTimer.Change(quantum, Timeout.InfiniteTimeSpan);
            }
        }

        public void EndSlice()
        {
            if (_quantumTimer is not null)
            {
                Volatile.Write(ref _armedSlice, 0);
                _quantumTimer.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            }

            _quantumExpired = false;
        }

        public void Dispose() => _quantumTimer?.Dispose();

        private void OnQuantumElapsed()
        {
            if (Volatile.Read(ref _armedSlice) == Volatile.Read(ref _slice))
            {
                _quantumExpired = true;
            }
        }
    }

    /// <summary>Restores the thread's own synchronization context and its previous worker.</summary>
    private protected readonly struct WorkerScope(Worker worker, Worker? previous) : IDisposable
    {
        public void Dispose()
        {
            worker.LeaveLaneContext();
            t_worker = previous;
        }
    }
}
