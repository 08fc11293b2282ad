namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>Gets whether any lane in <paramref name="laneMask"/> has a ready item (one volatile read).</summary>
    internal bool IsReady(int laneMask) => _queues.IsReady(laneMask);

    internal int GetQueueLength(Lane lane) => _queues.Count(lane.Priority.Rank);

    internal IEnumerable<Task> GetScheduledTasks(Lane lane) => _queues.GetScheduledTasks(lane.Priority.Rank);

    /// <summary>Gets whether every lane is empty.</summary>
    private protected bool AreLanesEmpty() => _queues.IsEmpty;
}
