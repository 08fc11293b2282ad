namespace PriorityAsync;

/// <summary>Restores the thread's own synchronization context and its previous worker when a worker's run ends.</summary>
internal readonly struct WorkerScope(SchedulerWorker worker, SchedulerWorker? previous) : IDisposable
{
    public void Dispose()
    {
        worker.LeaveLaneContext();
        PriorityScheduler.RestoreWorker(previous);
    }
}
