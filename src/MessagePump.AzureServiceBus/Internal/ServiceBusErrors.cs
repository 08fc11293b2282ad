using System.Diagnostics;
using System.Net.Sockets;
using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Internal;

/// <summary>Maps the SDK's failures onto the transport's exceptions, in one place.</summary>
internal static class ServiceBusErrors
{
    /// <summary>
    /// Returns whether <paramref name="exception"/> says the lock is gone: <see cref="ServiceBusFailureReason.MessageLockLost"/>
    /// (an expired lock, a settled message, or a lock token of a receive link that was detached, even before
    /// <c>LockedUntil</c>), <see cref="ServiceBusFailureReason.SessionLockLost"/> and <see cref="ServiceBusFailureReason.MessageNotFound"/>.
    /// </summary>
    public static bool IsLockLost(Exception exception) =>
        exception is ServiceBusException { Reason: ServiceBusFailureReason.MessageLockLost or ServiceBusFailureReason.SessionLockLost or ServiceBusFailureReason.MessageNotFound };

    /// <summary>Returns whether an accept failed only because no session was available within the wait.</summary>
    public static bool IsNoSessionAvailable(Exception? exception) =>
        exception is ServiceBusException { Reason: ServiceBusFailureReason.ServiceTimeout or ServiceBusFailureReason.SessionCannotBeLocked };

    /// <summary>
    /// Returns whether <paramref name="exception"/> is worth retrying: a <see cref="ServiceBusException"/> whose
    /// <see cref="ServiceBusException.IsTransient"/> is true (busy, timeout, communication problem), or a timeout or
    /// socket failure below the SDK.
    /// </summary>
    public static bool IsTransient(Exception exception) => exception switch
    {
        ServiceBusException sb => sb.IsTransient
            || sb.Reason is ServiceBusFailureReason.ServiceBusy or ServiceBusFailureReason.ServiceTimeout or ServiceBusFailureReason.ServiceCommunicationProblem,
        TimeoutException or SocketException or IOException => true,
        _ => false,
    };

    /// <summary>
    /// The exception to throw for a failed <paramref name="operation"/>, or <see langword="null"/> to rethrow the
    /// original: <see cref="LeaseLostException"/> for a lost lock, <see cref="TransientTransportException"/> for a
    /// transient failure; a cancellation the caller asked for is rethrown as it is.
    /// </summary>
    public static Exception? Translate(Exception exception, string operation, CancellationToken cancellationToken)
    {
        if (exception is OperationCanceledException && cancellationToken.IsCancellationRequested)
        {
            return null;
        }

        if (exception is ObjectDisposedException)
        {
            return new LeaseLostException($"{operation} failed: the receiver that holds the lock was closed ({Describe(exception)}).", exception);
        }

        if (IsLockLost(exception))
        {
            return new LeaseLostException($"{operation} failed: the lock is lost ({Describe(exception)}).", exception);
        }

        return IsTransient(exception)
            ? new TransientTransportException($"{operation} failed transiently ({Describe(exception)}); it may be retried.", exception)
            : null;
    }

    /// <summary>
    /// Returns whether <paramref name="exception"/> says the entity is missing or disabled
    /// (<see cref="ServiceBusFailureReason.MessagingEntityNotFound"/>, <see cref="ServiceBusFailureReason.MessagingEntityDisabled"/>):
    /// a state of the namespace that changes while a source runs (the entity is created, re-created or enabled later),
    /// so the source tries again after <see cref="EntityRetry"/>'s backoff instead of stopping.
    /// </summary>
    public static bool IsEntityUnavailable(Exception exception) =>
        exception is ServiceBusException { Reason: ServiceBusFailureReason.MessagingEntityNotFound or ServiceBusFailureReason.MessagingEntityDisabled };

    /// <summary>
    /// Returns the SDK's exception behind one this class made from it (its <see cref="Exception.InnerException"/>), or
    /// <paramref name="exception"/> itself: what <c>ServiceBusProcessor</c> would have given its error handler.
    /// </summary>
    public static Exception Original(Exception exception) =>
        exception is InvalidOperationException or TransientTransportException or LeaseLostException
        && exception.InnerException is ServiceBusException or UnauthorizedAccessException
            ? exception.InnerException
            : exception;

    /// <summary>
    /// The exception to throw when a receive or an accept fails: besides <see cref="Translate"/>, a missing entity,
    /// missing rights, or a session mismatch become an <see cref="InvalidOperationException"/> that names the entity. Each
    /// is told by the SDK's exception type or <see cref="ServiceBusException.Reason"/>, never by its message text.
    /// </summary>
    public static Exception? TranslateReceive(Exception exception, ServiceBusEntity entity, bool sessions, CancellationToken cancellationToken)
    {
        switch (exception)
        {
            case ServiceBusException when IsEntityUnavailable(exception):
                return EntityUnavailable(exception, entity, retryIn: null);
            case ObjectDisposedException:
                return Translate(exception, $"Receiving from the {entity}", cancellationToken);
            case UnauthorizedAccessException:
                return new InvalidOperationException($"The credentials may not receive from the {entity}: they need the Listen right (the 'Azure Service Bus Data Receiver' role) ({Describe(exception)}).", exception);
            case InvalidOperationException when exception.GetType() == typeof(InvalidOperationException):
                return SessionMismatch(exception, entity, sessions);
            default:
                return Translate(exception, $"Receiving from the {entity}", cancellationToken);
        }
    }

    /// <summary>
    /// The <see cref="InvalidOperationException"/> for a receive link the broker refused as not allowed, which on a
    /// receive is a session mismatch: an entity that requires sessions refuses a receiver without one, and one that does
    /// not refuses a session receiver.
    /// </summary>
    /// <remarks>
    /// The SDK gives this refusal no <see cref="ServiceBusFailureReason"/>: it maps the broker's <c>amqp:not-allowed</c>
    /// to a plain <see cref="InvalidOperationException"/>, the type it also throws from some checks of its own (a closed
    /// receiver's <see cref="ObjectDisposedException"/>, a subtype, is handled before). The exact type is all there is to
    /// tell the refusal by, so a plain <see cref="InvalidOperationException"/> of a receive thrown for another reason is
    /// reported as this mismatch too; the SDK's own message stays in the text and as the inner exception.
    /// </remarks>
    private static InvalidOperationException SessionMismatch(Exception exception, ServiceBusEntity entity, bool sessions) => sessions
        ? new InvalidOperationException($"The broker refused a session receiver of the {entity} ({Describe(exception)}): an entity that does not require sessions refuses one; receive from it with a ServiceBusMessageSource.", exception)
        : new InvalidOperationException($"The broker refused a receiver of the {entity} ({Describe(exception)}): an entity that requires sessions refuses a receiver without a session; receive from it with a ServiceBusSessionMessageSource.", exception);

    /// <summary>
    /// The <see cref="InvalidOperationException"/> for a missing or disabled entity (<see cref="IsEntityUnavailable"/>),
    /// naming it and, where the caller tries again, when.
    /// </summary>
    public static InvalidOperationException EntityUnavailable(Exception exception, ServiceBusEntity entity, TimeSpan? retryIn)
    {
        Debug.Assert(IsEntityUnavailable(exception), "only for a missing or disabled entity");
        var state = exception is ServiceBusException { Reason: ServiceBusFailureReason.MessagingEntityDisabled }
            ? $"The {entity} is disabled for receiving"
            : $"The Service Bus namespace has no {entity}: create it, or fix the name";
        var retry = retryIn is { } delay ? $"; the source tries again in {delay}" : string.Empty;
        return new InvalidOperationException($"{state} ({Describe(exception)}){retry}.", exception);
    }

    private static string Describe(Exception exception) => exception is ServiceBusException sb
        ? $"{nameof(ServiceBusException)} {sb.Reason}: {sb.Message}"
        : $"{exception.GetType().Name}: {exception.Message}";
}
