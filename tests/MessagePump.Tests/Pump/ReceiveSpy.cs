namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>A source that checks, at every receive, that nothing more urgent was ready and the pump had spare capacity.</summary>
internal sealed class ReceiveSpy(IMessageSource inner, PriorityScheduler scheduler) : IMessageSource
{
    private int _receives;
    private int _urgentWorkReady;
    private int _overCapacity;

    public PriorityMessagePump? Pump { get; set; }

    public int Receives => _receives;

    public int ReceivesWhileUrgentWorkReady => _urgentWorkReady;

    public int ReceivesOverCapacity => _overCapacity;

    public TimeSpan? LockDuration => inner.LockDuration;

    public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        Interlocked.Increment(ref _receives);
        if (scheduler.GetLane(LanePriority.Lease).QueueLength > 0 || scheduler.GetLane(LanePriority.Processing).QueueLength > 0)
        {
            Interlocked.Increment(ref _urgentWorkReady);
        }

        if (Pump is { } pump && pump.GetStatistics().InFlight >= pump.MaxInFlight)
        {
            Interlocked.Increment(ref _overCapacity);
        }

        return inner.ReceiveAsync(cancellationToken);
    }
}
