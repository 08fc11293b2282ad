using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// What a <see cref="ServiceBusPumpSessionProcessor"/> hands its <see cref="ServiceBusPumpSessionProcessor.ProcessMessageAsync"/>
/// handler, shaped like the SDK's <see cref="ProcessSessionMessageEventArgs"/>: the message and its settle calls (as
/// <see cref="ServiceBusPumpMessageEventArgs"/>), and the session's: its id, its lock, its state, and
/// <see cref="ReleaseSession"/>.
/// </summary>
public sealed class ServiceBusPumpSessionMessageEventArgs : ServiceBusPumpMessageEventArgs
{
    private readonly ServiceBusSessionMessageSource _session;

    internal ServiceBusPumpSessionMessageEventArgs(MessageContext context, ServiceBusLeasedMessage leased, ServiceBusSessionMessageSource session, Lane leaseLane, string entityPath, string fullyQualifiedNamespace, CancellationToken cancellationToken)
        : base(context, leased, leaseLane, entityPath, fullyQualifiedNamespace, cancellationToken)
    {
        _session = session;
    }

    /// <summary>Gets the session's identifier.</summary>
    public string SessionId => _session.SessionId;

    /// <summary>Gets when the session lock expires unless renewed (the pump's lease keeper renews it while the session is held).</summary>
    public DateTimeOffset SessionLockedUntil => _session.SessionLockedUntil;

    /// <summary>Gets the session's state, as the broker keeps it (<see cref="ServiceBusSessionReceiver.GetSessionStateAsync"/>).</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The state; <see langword="null"/> when none was set.</returns>
    /// <exception cref="ServiceBusException">The session lock was lost, or the broker refused the call.</exception>
    public Task<BinaryData> GetSessionStateAsync(CancellationToken cancellationToken = default) =>
        _session.ReadStateAsync(cancellationToken);

    /// <summary>Sets the session's state at the broker (<see cref="ServiceBusSessionReceiver.SetSessionStateAsync"/>): the next handler, and the next acceptance of the session, read it.</summary>
    /// <param name="sessionState">The state; <see langword="null"/> clears it.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the broker has stored it.</returns>
    /// <exception cref="ServiceBusException">The session lock was lost, or the broker refused the call.</exception>
    public Task SetSessionStateAsync(BinaryData? sessionState, CancellationToken cancellationToken = default) =>
        _session.WriteStateAsync(sessionState, cancellationToken);

    /// <summary>
    /// Closes the session once this handler has ended (its message settled): no further message of it is received
    /// under this acceptance, <see cref="ServiceBusPumpSessionProcessor.SessionClosingAsync"/> is raised, and the
    /// session is released at the broker, so that it can be accepted again later (by this processor or another
    /// consumer) with its state kept. As the SDK's <see cref="ProcessSessionMessageEventArgs.ReleaseSession"/>.
    /// </summary>
    public void ReleaseSession() => _session.Lock.RequestRelease();
}
