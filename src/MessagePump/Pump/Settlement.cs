namespace PriorityAsync.MessagePump;

/// <summary>How the pump settles a message.</summary>
internal enum Settlement
{
    Complete,
    Abandon,
    DeadLetter,

    /// <summary>Set aside by the broker, received again only by its sequence number (Service Bus's defer); a transport offers it on its own message type.</summary>
    Defer,
}
