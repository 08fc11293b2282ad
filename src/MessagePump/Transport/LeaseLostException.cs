namespace PriorityAsync.MessagePump;

/// <summary>
/// Thrown when a message's lease is no longer held: it expired, or the message was already settled. The broker may
/// have delivered the message again; the caller must not complete it.
/// </summary>
/// <remarks>Azure Service Bus reports the same condition as <c>ServiceBusFailureReason.MessageLockLost</c>.</remarks>
public sealed class LeaseLostException : Exception
{
    /// <summary>Creates the exception with a default message.</summary>
    public LeaseLostException()
        : base("The message's lease was lost: it expired or the message was already settled.")
    {
    }

    /// <summary>Creates the exception with <paramref name="message"/>.</summary>
    /// <param name="message">The message.</param>
    public LeaseLostException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with <paramref name="message"/> and the broker's own exception.</summary>
    /// <param name="message">The message.</param>
    /// <param name="innerException">The broker's exception.</param>
    public LeaseLostException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
