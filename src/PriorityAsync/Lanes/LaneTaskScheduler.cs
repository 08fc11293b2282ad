namespace PriorityAsync;

/// <summary>The task scheduler of one lane: queued tasks go into the lane's queue.</summary>
internal sealed class LaneTaskScheduler : TaskScheduler
{
    public LaneTaskScheduler(Lane lane)
    {
        Lane = lane;
    }

    public Lane Lane { get; }

    public override int MaximumConcurrencyLevel => Lane.Scheduler.GetMaximumConcurrencyLevel(Lane);

    internal bool RunTask(Task task) => TryExecuteTask(task);

    protected override void QueueTask(Task task) => Lane.Scheduler.Enqueue(Lane, task, null);

    protected override bool TryExecuteTaskInline(Task task, bool taskWasPreviouslyQueued)
    {
        // Inline only on this scheduler's thread and only from the same lane: inlining from another lane would
        // run the task at the wrong priority. A task inlined after it was queued stays in the queue; when its turn
        // comes, TryExecuteTask sees it has already run and does nothing.
        return ReferenceEquals(Lane.Scheduler.CurrentLaneOnThisThread, Lane) && TryExecuteTask(task);
    }

    protected override IEnumerable<Task>? GetScheduledTasks() => Lane.Scheduler.GetScheduledTasks(Lane);
}
