namespace PriorityAsync;

/// <summary>One rejected item on its way to the thread pool: it reports itself, then runs without a lane context.</summary>
internal sealed class RejectedLaneWork(Lane lane, LaneWorkItem item)
{
    public void Run()
    {
        var scheduler = lane.Scheduler;
        scheduler.RaiseRejectedWork(lane, item.Kind);
        try
        {
            item.Invoke(lane);
        }
        catch (Exception ex)
        {
            scheduler.RaiseUnhandledException(lane, ex);
        }
    }
}
