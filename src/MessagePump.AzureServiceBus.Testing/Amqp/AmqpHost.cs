using System.Collections.Concurrent;
using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;
using Microsoft.Azure.Amqp.Framing;
using Microsoft.Azure.Amqp.Sasl;
using Microsoft.Azure.Amqp.Transport;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>
/// One listening period of the broker: the loopback listener, SASL (ANONYMOUS and MSSBCBS), the accepted connections,
/// and the routing of attached links to entities, the $cbs node and the $management nodes.
/// </summary>
internal sealed partial class AmqpHost : IRuntimeProvider
{
    private static readonly TimeSpan OpenTimeout = TimeSpan.FromSeconds(60);
    private readonly ServiceBusTestBroker _broker;
    private readonly AmqpSettings _settings;
    private readonly AmqpTransportListener _listener;
    private readonly HashSet<AmqpConnection> _connections = [];
    private readonly List<ConsumerLink> _consumers = [];
    private readonly ConcurrentDictionary<string, SendingAmqpLink> _replyLinks = new(StringComparer.Ordinal);
    private readonly ManagementNode _management;
    private bool _stopped;

    public AmqpHost(ServiceBusTestBroker broker, int port)
    {
        _broker = broker;
        _management = new ManagementNode(broker);
        _settings = new AmqpSettings { RuntimeProvider = this };
        var sasl = new SaslTransportProvider();
        sasl.Versions.Add(new AmqpVersion(1, 0, 0));
        sasl.AddHandler(new SaslAnonymousHandler());
        sasl.AddHandler(new SaslAnonymousHandler("MSSBCBS"));
        _settings.TransportProviders.Add(sasl);
        var amqp = new AmqpTransportProvider();
        amqp.Versions.Add(new AmqpVersion(1, 0, 0));
        _settings.TransportProviders.Add(amqp);
        (_listener, Port) = Listen(port, _settings, OnAcceptTransport);
    }

    public int Port { get; }

    public void Stop()
    {
        AmqpConnection[] connections;
        lock (_connections)
        {
            _stopped = true;
            connections = [.. _connections];
            _connections.Clear();
        }

        _listener.SafeClose();
        foreach (var connection in connections)
        {
            // Abort, not close: the broker goes away at once, nothing more is read or answered on these connections.
            connection.Abort();
        }
    }

    /// <summary>
    /// Aborts every accepted connection (the socket closes without an AMQP close) and keeps listening; the task completes
    /// once each connection and each of its receive links has closed on the broker's side.
    /// </summary>
    public Task DropConnectionsAsync()
    {
        AmqpConnection[] connections;
        lock (_connections)
        {
            connections = [.. _connections];
        }

        ConsumerLink[] consumers;
        lock (_consumers)
        {
            consumers = [.. _consumers];
        }

        var closed = new List<Task>();
        foreach (var connection in connections)
        {
            var connectionClosed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            connection.SafeAddClosed((_, _) => connectionClosed.TrySetResult());
            closed.Add(connectionClosed.Task);
            closed.AddRange(consumers.Where(consumer => ReferenceEquals(consumer.Connection, connection)).Select(consumer => consumer.Detached));
            connection.Abort();
        }

        return Task.WhenAll(closed);
    }

    public Task DetachConsumersAsync(string? entityPath) =>
        DetachConsumersAsync(entityPath, ServiceBusSymbols.DetachForced, "The link was detached by ServiceBusTestFaults.DetachReceiveLinksAsync.");

    public Task DetachConsumersAsync(string? entityPath, AmqpSymbol condition, string description)
    {
        var detached = new List<Task>();
        ConsumerLink[] consumers;
        lock (_consumers)
        {
            consumers = [.. _consumers];
        }

        foreach (var consumer in consumers)
        {
            if (entityPath is null || string.Equals(consumer.Queue.Path, entityPath.Trim('/'), StringComparison.OrdinalIgnoreCase))
            {
                consumer.Close(condition, description);
                detached.Add(consumer.Detached);
            }
        }

        return Task.WhenAll(detached);
    }

    AmqpConnection IConnectionFactory.CreateConnection(TransportBase transport, ProtocolHeader protocolHeader, bool isInitiator, AmqpSettings amqpSettings, AmqpConnectionSettings connectionSettings) =>
        new(transport, protocolHeader, isInitiator, amqpSettings, connectionSettings);

    AmqpSession ISessionFactory.CreateSession(AmqpConnection connection, AmqpSessionSettings settings) =>
        throw new InvalidOperationException("The broker does not begin sessions.");

    AmqpLink ILinkFactory.CreateLink(AmqpSession session, AmqpLinkSettings settings)
    {
        if (settings.Role == true)
        {
            settings.MaxMessageSize = _broker.MaxMessageSize;
            return new ReceivingAmqpLink(session, settings);
        }

        return new SendingAmqpLink(session, settings);
    }

    IAsyncResult ILinkFactory.BeginOpenLink(AmqpLink link, TimeSpan timeout, AsyncCallback callback, object state)
    {
        var opened = new TaskCompletionSource(state, TaskCreationOptions.RunContinuationsAsynchronously);
        _ = CompleteAsync();
        return opened.Task;

        async Task CompleteAsync()
        {
            try
            {
                await OpenLinkAsync(link).ConfigureAwait(false);
                opened.TrySetResult();
            }
            catch (Exception exception) when (exception is not OutOfMemoryException)
            {
                opened.TrySetException(exception);
            }

            try
            {
                callback(opened.Task);
            }
            catch (Exception exception) when (exception is not OutOfMemoryException)
            {
                link.SafeClose(exception);
            }
        }
    }

    // The library calls this from the callback above, once the task has completed: nothing blocks.
#pragma warning disable VSTHRD002 // Synchronously waiting: the task is already complete.
    void ILinkFactory.EndOpenLink(IAsyncResult result) => ((Task)result).GetAwaiter().GetResult();
#pragma warning restore VSTHRD002

    private static string? AddressOf(object? terminus) => terminus switch
    {
        Source source => source.Address?.ToString(),
        Target target => target.Address?.ToString(),
        _ => null,
    };

    private static AmqpException Error(Microsoft.Azure.Amqp.Encoding.AmqpSymbol condition, string description) =>
        new(new Error { Condition = condition, Description = description });
}
