namespace PriorityAsync.MessagePump;

public sealed partial class PriorityMessagePump
{
    /// <summary>Takes a snapshot of the pump's accounting.</summary>
    /// <returns>The snapshot.</returns>
    public MessagePumpStatistics GetStatistics()
    {
        int inFlight;
        lock (_gate)
        {
            inFlight = _inFlight.Count;
        }

        return _events.Statistics(inFlight, Volatile.Read(ref _peakInFlight));
    }
}
