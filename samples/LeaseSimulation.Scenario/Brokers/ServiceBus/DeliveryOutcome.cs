namespace LeaseSimulation.Brokers.ServiceBus;

/// <summary>How one delivery of a Service Bus message ended, as its consumer saw it.</summary>
public enum DeliveryOutcome
{
    /// <summary>The consumer completed it while it held the lock: the message is done.</summary>
    Completed,

    /// <summary>Its lock was lost (a renewal or the completion was answered lock-lost): the broker redelivers it, or dead-letters it at its last delivery.</summary>
    LockLost,

    /// <summary>The consumer gave it back (the run was stopped at its deadline): not a lost lock.</summary>
    Abandoned,
}
