namespace LeaseSimulation.Consumers;

/// <summary>The three kinds of work of the consumer, most urgent first.</summary>
public enum ConsumerRole
{
    /// <summary>The lease keeper: renews a message's lease.</summary>
    Lease,

    /// <summary>The processor: CPU and IO operations on a message.</summary>
    Processing,

    /// <summary>The receive loop: takes the next message.</summary>
    Receive,
}
