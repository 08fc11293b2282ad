namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
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
