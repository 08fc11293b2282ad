namespace PriorityAsync.MessagePump;

/// <summary>
/// A consistent snapshot of an <see cref="InMemoryQueue"/>'s accounting, taken under the queue's lock after expired
/// locks were processed.
/// </summary>
/// <remarks>
/// Every snapshot satisfies three invariants:
/// <c>Sent == Completed + DeadLettered + Available + InFlight</c> (each message is in exactly one place);
/// <c>Received == Completed + Abandoned + LeasesLost + (DeadLettered - MaxDeliveryDeadLettered) + InFlight</c>
/// (each delivery ends exactly once); and
/// <c>Abandoned + LeasesLost == Redelivered + MaxDeliveryDeadLettered + AwaitingRedelivery</c> (each released
/// delivery is delivered again or dead-lettered).
/// </remarks>
public sealed record InMemoryQueueStatistics
{
    /// <summary>Creates an empty snapshot; the queue makes them (<see cref="InMemoryQueue.GetStatistics"/>).</summary>
    internal InMemoryQueueStatistics()
    {
    }

    /// <summary>Gets how many messages were sent.</summary>
    public long Sent { get; init; }

    /// <summary>Gets how many deliveries were made (each receive that returned a message).</summary>
    public long Received { get; init; }

    /// <summary>Gets how many of the deliveries were second or later deliveries of a message.</summary>
    public long Redelivered { get; init; }

    /// <summary>Gets how many messages were completed; a message completes at most once.</summary>
    public long Completed { get; init; }

    /// <summary>Gets how many deliveries were abandoned by their consumer.</summary>
    public long Abandoned { get; init; }

    /// <summary>Gets how many messages are in the dead-letter queue, for any reason.</summary>
    public long DeadLettered { get; init; }

    /// <summary>Gets how many of the dead-lettered messages the queue moved there itself after the last allowed delivery.</summary>
    public long MaxDeliveryDeadLettered { get; init; }

    /// <summary>Gets how many locks expired before their holder settled the message (lost leases).</summary>
    public long LeasesLost { get; init; }

    /// <summary>Gets how many renew or settle calls failed with <see cref="LeaseLostException"/>.</summary>
    public long LeaseLostErrors { get; init; }

    /// <summary>Gets how many renewals succeeded (leases renewed, whether by single or batch calls).</summary>
    public long Renewals { get; init; }

    /// <summary>
    /// Gets how many renew calls reached the queue, failed ones included: a single renewal and a batch renewal
    /// (<see cref="InMemoryQueue.RenewBatchAsync"/>) are one call each, whatever the batch holds.
    /// </summary>
    public long RenewCalls { get; init; }

    /// <summary>Gets how many calls failed with an injected <see cref="TransientTransportException"/>.</summary>
    public long TransientFaults { get; init; }

    /// <summary>Gets how many messages are locked by a consumer now.</summary>
    public int InFlight { get; init; }

    /// <summary>Gets how many messages are visible and waiting for a receive.</summary>
    public int Available { get; init; }

    /// <summary>Gets how many of the <see cref="Available"/> messages were delivered before.</summary>
    public int AwaitingRedelivery { get; init; }
}
