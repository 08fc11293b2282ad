namespace LeaseSimulation.Messages;

/// <summary>Where a message is in its life.</summary>
public enum MessageStatus
{
    /// <summary>Received, being processed, its lease kept.</summary>
    InFlight,

    /// <summary>Processed and completed while its lease was valid.</summary>
    Done,

    /// <summary>Its lease expired: a renewal (or the completion) came more than the lease duration after the last renewal.</summary>
    Lost,
}
