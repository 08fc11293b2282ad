namespace PriorityAsync.MessagePump;

/// <summary>
/// Thrown by a transport when an operation failed in a way worth retrying (a timeout, a busy broker, a dropped
/// connection). The operation had no effect.
/// </summary>
/// <remarks>An Azure Service Bus adapter wraps a <c>ServiceBusException</c> whose <c>IsTransient</c> is true.</remarks>
public sealed class TransientTransportException : Exception
{
    /// <summary>Creates the exception with a default message.</summary>
    public TransientTransportException()
        : base("The transport operation failed transiently.")
    {
    }

    /// <summary>Creates the exception with <paramref name="message"/>.</summary>
    /// <param name="message">The message.</param>
    public TransientTransportException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with <paramref name="message"/> and the broker's own exception.</summary>
    /// <param name="message">The message.</param>
    /// <param name="innerException">The broker's exception.</param>
    public TransientTransportException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
