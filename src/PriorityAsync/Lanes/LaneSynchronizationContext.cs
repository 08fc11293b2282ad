namespace PriorityAsync;

/// <summary>The synchronization context of one lane: posts go into the lane's queue.</summary>
internal sealed class LaneSynchronizationContext : SynchronizationContext
{
    public LaneSynchronizationContext(Lane lane)
    {
        Lane = lane;
    }

    public Lane Lane { get; }

    public override void Post(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        Lane.Scheduler.Enqueue(Lane, d, state);
    }

    public override void Send(SendOrPostCallback d, object? state)
    {
        ArgumentNullException.ThrowIfNull(d);
        if (Lane.Scheduler.IsWorkerThread)
        {
            d(state);
            return;
        }

        Lane.Scheduler.SendFromOutside(Lane, d, state);
    }

    public override SynchronizationContext CreateCopy() => this;

    public override void OperationStarted() => Lane.Scheduler.OperationStarted();

    public override void OperationCompleted() => Lane.Scheduler.OperationCompleted();

    public override string ToString() => Lane.ToString();
}
