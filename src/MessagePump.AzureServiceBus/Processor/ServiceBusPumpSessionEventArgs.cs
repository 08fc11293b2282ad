using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// What a <see cref="ServiceBusPumpSessionProcessor"/> hands its <see cref="ServiceBusPumpSessionProcessor.SessionInitializingAsync"/>
/// and <see cref="ServiceBusPumpSessionProcessor.SessionClosingAsync"/> handlers, shaped like the SDK's <see cref="ProcessSessionEventArgs"/>:
/// the session's id, its lock and its state.
/// </summary>
public sealed class ServiceBusPumpSessionEventArgs : EventArgs
{
    private readonly ServiceBusSessionMessageSource _session;

    internal ServiceBusPumpSessionEventArgs(ServiceBusSessionMessageSource session, string entityPath, string fullyQualifiedNamespace, CancellationToken cancellationToken)
    {
        _session = session;
        EntityPath = entityPath;
        FullyQualifiedNamespace = fullyQualifiedNamespace;
        CancellationToken = cancellationToken;
    }

    /// <summary>Gets the session's identifier.</summary>
    public string SessionId => _session.SessionId;

    /// <summary>The session's source (its lock's accounting).</summary>
    internal ServiceBusSessionMessageSource Source => _session;

    /// <summary>Gets when the session lock expires unless renewed (the processor renews it while the session is held).</summary>
    public DateTimeOffset SessionLockedUntil => _session.SessionLockedUntil;

    /// <summary>Gets the path of the queue or subscription.</summary>
    public string EntityPath { get; }

    /// <summary>Gets the namespace's host name.</summary>
    public string FullyQualifiedNamespace { get; }

    /// <summary>Gets a token canceled when the processor stops without waiting any longer.</summary>
    public CancellationToken CancellationToken { get; }

    /// <summary>Gets the session's state, as the broker keeps it (<see cref="ServiceBusSessionReceiver.GetSessionStateAsync"/>).</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The state; <see langword="null"/> when none was set.</returns>
    /// <exception cref="ServiceBusException">The session lock was lost, or the broker refused the call.</exception>
    public Task<BinaryData> GetSessionStateAsync(CancellationToken cancellationToken = default) =>
        _session.ReadStateAsync(cancellationToken);

    /// <summary>Sets the session's state at the broker (<see cref="ServiceBusSessionReceiver.SetSessionStateAsync"/>).</summary>
    /// <param name="sessionState">The state; <see langword="null"/> clears it.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>A task that completes when the broker has stored it.</returns>
    /// <exception cref="ServiceBusException">The session lock was lost, or the broker refused the call.</exception>
    public Task SetSessionStateAsync(BinaryData? sessionState, CancellationToken cancellationToken = default) =>
        _session.WriteStateAsync(sessionState, cancellationToken);
}
