namespace LeaseSimulation.Messages;

/// <summary>What a broker message reports to the run's bookkeeping: how a renewal ended, or how the delivery was settled.</summary>
public enum LeaseEvent
{
    /// <summary>The broker renewed the lock.</summary>
    Renewed,

    /// <summary>A renewal found the lock lost before any settlement of the message began.</summary>
    RenewalLost,

    /// <summary>The broker completed the message.</summary>
    Completed,

    /// <summary>The broker abandoned the message: it is delivered again.</summary>
    Abandoned,

    /// <summary>The broker dead-lettered the message.</summary>
    DeadLettered,

    /// <summary>A settlement found the lock lost.</summary>
    SettlementLost,
}
