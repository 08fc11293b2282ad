namespace PriorityAsync.MessagePump;

/// <summary>What a <see cref="MessageSettlement"/> does with a leased message.</summary>
public enum SettlementKind
{
    /// <summary>Removes the message: it was processed.</summary>
    Complete,

    /// <summary>Releases the lease: the message becomes visible again for another delivery.</summary>
    Abandon,

    /// <summary>Moves the message to the dead-letter queue: it is not delivered again.</summary>
    DeadLetter,

    /// <summary>Sets the message aside, received again only by its sequence number (Service Bus's defer).</summary>
    Defer,
}
