namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    private long _received;
    private long _completed;
    private long _abandoned;
    private long _abandonedAtStop;
    private long _unsettledAtStop;
    private long _deadLettered;
    private long _leasesLost;
    private long _settleFailures;
    private long _handlerFailures;
    private long _renewals;
    private long _transientRetries;
    private int _peakInFlight;

    /// <summary>Takes a snapshot of the pump's accounting.</summary>
    /// <returns>The snapshot.</returns>
    public MessagePumpStatistics GetStatistics()
    {
        int inFlight;
        lock (_gate)
        {
            inFlight = _inFlight.Count;
        }

        return new MessagePumpStatistics
        {
            Received = Interlocked.Read(ref _received),
            Completed = Interlocked.Read(ref _completed),
            Abandoned = Interlocked.Read(ref _abandoned),
            AbandonedAtStop = Interlocked.Read(ref _abandonedAtStop),
            UnsettledAtStop = Interlocked.Read(ref _unsettledAtStop),
            DeadLettered = Interlocked.Read(ref _deadLettered),
            LeasesLost = Interlocked.Read(ref _leasesLost),
            SettleFailures = Interlocked.Read(ref _settleFailures),
            HandlerFailures = Interlocked.Read(ref _handlerFailures),
            Renewals = Interlocked.Read(ref _renewals),
            TransientRetries = Interlocked.Read(ref _transientRetries),
            InFlight = inFlight,
            PeakInFlight = Volatile.Read(ref _peakInFlight),
        };
    }
}
