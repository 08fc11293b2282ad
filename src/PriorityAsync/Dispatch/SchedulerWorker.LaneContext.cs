namespace PriorityAsync;

internal sealed partial class SchedulerWorker
{
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
}
