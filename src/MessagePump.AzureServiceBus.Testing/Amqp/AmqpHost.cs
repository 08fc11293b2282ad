using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Framing;
using Microsoft.Azure.Amqp.Sasl;
using Microsoft.Azure.Amqp.Transport;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>
/// One listening period of the broker: the loopback listener, SASL (ANONYMOUS and MSSBCBS), the accepted connections,
/// and the routing of attached links to entities, the $cbs node and the $management nodes.
/// </summary>
internal sealed class AmqpHost : IRuntimeProvider
{
    private const uint MaxMessageSize = 1024 * 1024;
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

    public void DetachConsumers(string? entityPath)
    {
        ConsumerLink[] consumers;
        lock (_consumers)
        {
            consumers = [.. _consumers];
        }

        foreach (var consumer in consumers)
        {
            if (entityPath is null || string.Equals(consumer.Queue.Path, entityPath.Trim('/'), StringComparison.OrdinalIgnoreCase))
            {
                consumer.Close(ServiceBusSymbols.DetachForced, "The link was detached by ServiceBusTestFaults.DetachReceiveLinksAsync.");
            }
        }
    }

    AmqpConnection IConnectionFactory.CreateConnection(TransportBase transport, ProtocolHeader protocolHeader, bool isInitiator, AmqpSettings amqpSettings, AmqpConnectionSettings connectionSettings) =>
        new(transport, protocolHeader, isInitiator, amqpSettings, connectionSettings);

    AmqpSession ISessionFactory.CreateSession(AmqpConnection connection, AmqpSessionSettings settings) =>
        throw new InvalidOperationException("The broker does not begin sessions.");

    AmqpLink ILinkFactory.CreateLink(AmqpSession session, AmqpLinkSettings settings)
    {
        if (settings.Role == true)
        {
            settings.MaxMessageSize = MaxMessageSize;
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

    /// <summary>
    /// Listens on 127.0.0.1. Port 0 asks the system for a free port first (the library's listener cannot report the port
    /// it bound), and tries again with another one if that port was taken in between.
    /// </summary>
    private static (AmqpTransportListener Listener, int Port) Listen(int port, AmqpSettings settings, Action<TransportListener, TransportAsyncCallbackArgs> onAccept)
    {
        for (var attempt = 1; ; attempt++)
        {
            var chosen = port != 0 ? port : FreeLoopbackPort();
            var listener = new AmqpTransportListener([new DedicatedThreadTransportListener(new IPEndPoint(IPAddress.Loopback, chosen))], settings);
            try
            {
                listener.Listen(onAccept);
                return (listener, chosen);
            }
            catch (SocketException) when (port == 0 && attempt < 10)
            {
                listener.SafeClose();
            }
        }
    }

    private static int FreeLoopbackPort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }

    private static string? AddressOf(object? terminus) => terminus switch
    {
        Source source => source.Address?.ToString(),
        Target target => target.Address?.ToString(),
        _ => null,
    };

    private static AmqpException Error(Microsoft.Azure.Amqp.Encoding.AmqpSymbol condition, string description) =>
        new(new Error { Condition = condition, Description = description });

    private void OnAcceptTransport(TransportListener listener, TransportAsyncCallbackArgs args)
    {
        if (args.Exception is not null || args.Transport is null)
        {
            return;
        }

        var connectionSettings = new AmqpConnectionSettings
        {
            ContainerId = "ServiceBusTestBroker",
            MaxFrameSize = 64 * 1024,
            IdleTimeOut = 4 * 60 * 1000,
        };
        AmqpConnection? connection = null;
        try
        {
            connection = new AmqpConnection(args.Transport, (ProtocolHeader)args.UserToken, false, _settings, connectionSettings);
            bool stopped;
            lock (_connections)
            {
                stopped = _stopped;
                if (!stopped)
                {
                    _connections.Add(connection);
                }
            }

            if (stopped)
            {
                connection.SafeClose();
                return;
            }

            connection.SafeAddClosed((sender, _) =>
            {
                lock (_connections)
                {
                    _connections.Remove((AmqpConnection)sender!);
                }
            });
            _ = OpenConnectionAsync(connection);
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            if (connection is not null)
            {
                connection.SafeClose(exception);
            }
            else
            {
                args.Transport.SafeClose(exception);
            }
        }
    }

    private static async Task OpenConnectionAsync(AmqpConnection connection)
    {
        try
        {
            await connection.OpenAsync(OpenTimeout).ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            connection.SafeClose(exception);
        }
    }

    private async Task OpenLinkAsync(AmqpLink link)
    {
        if (link.IsReceiver)
        {
            var address = AddressOf(link.Settings.Target) ?? throw Error(ServiceBusSymbols.ArgumentError, "The target address is missing.");
            var receiver = (ReceivingAmqpLink)link;
            if (string.Equals(address, ServiceBusSymbols.CbsAddress, StringComparison.Ordinal))
            {
                AttachRequests(receiver, address, CbsNode.HandleAsync);
            }
            else if (address.EndsWith(ServiceBusSymbols.ManagementSuffix, StringComparison.OrdinalIgnoreCase))
            {
                var entity = _broker.FindQueue(address[..^ServiceBusSymbols.ManagementSuffix.Length])
                    ?? throw Error(ServiceBusSymbols.EntityNotFound, $"The messaging entity '{address}' could not be found.");
                AttachRequests(receiver, address, request => _management.HandleAsync(entity, request));
            }
            else
            {
                var queue = _broker.FindQueue(address);
                var topic = queue is null ? _broker.FindTopic(address) : null;
                if ((queue is null && topic is null) || queue?.IsDeadLetterQueue == true)
                {
                    throw Error(ServiceBusSymbols.EntityNotFound, $"The messaging entity '{address}' could not be found.");
                }

                PublisherLink.Attach(_broker, receiver, queue, topic);
            }

            return;
        }

        var sender = (SendingAmqpLink)link;
        var sourceAddress = AddressOf(link.Settings.Source) ?? throw Error(ServiceBusSymbols.ArgumentError, "The source address is missing.");
        if (string.Equals(sourceAddress, ServiceBusSymbols.CbsAddress, StringComparison.Ordinal) || sourceAddress.EndsWith(ServiceBusSymbols.ManagementSuffix, StringComparison.OrdinalIgnoreCase))
        {
            var replyTo = AddressOf(link.Settings.Target) ?? throw Error(ServiceBusSymbols.ArgumentError, "The reply link needs a target address.");
            var key = ReplyKey(sourceAddress, replyTo);
            _replyLinks[key] = sender;
            sender.SafeAddClosed((_, _) => _replyLinks.TryRemove(new KeyValuePair<string, SendingAmqpLink>(key, sender)));
            return;
        }

        var consumerQueue = _broker.FindQueue(sourceAddress)
            ?? throw Error(ServiceBusSymbols.EntityNotFound, $"The messaging entity '{sourceAddress}' could not be found.");
        await AttachConsumerAsync(sender, consumerQueue).ConfigureAwait(false);
    }

    private async Task AttachConsumerAsync(SendingAmqpLink link, ServiceBusTestQueue queue)
    {
        var source = (Source)link.Settings.Source;
        var sessionRequested = false;
        string? requestedSession = null;
        if (source.FilterSet is { } filters)
        {
            foreach (var filter in filters)
            {
                if (filter.Key.Key is Microsoft.Azure.Amqp.Encoding.AmqpSymbol symbol && symbol.Equals(ServiceBusSymbols.SessionFilter))
                {
                    sessionRequested = true;
                    requestedSession = filter.Value as string;
                }
            }
        }

        if (queue.RequiresSession && !sessionRequested)
        {
            throw Error(ServiceBusSymbols.NotAllowed, $"It is not possible for an entity that requires sessions ('{queue.Path}') to create a non-sessionful message receiver.");
        }

        if (!queue.RequiresSession && sessionRequested)
        {
            throw Error(ServiceBusSymbols.NotAllowed, $"It is not possible for a session receiver to read '{queue.Path}', which does not require sessions.");
        }

        if (_broker.Faults.TakeReceiveFault() is { } fault)
        {
            var (condition, description) = FaultErrors.For(fault, sessionRequested);
            throw Error(condition, description);
        }

        var consumer = new ConsumerLink(_broker, link, queue);
        if (sessionRequested)
        {
            var session = await AcquireSessionAsync(link, queue, consumer, requestedSession).ConfigureAwait(false);
            consumer.SessionId = session.SessionId;
            source.FilterSet![ServiceBusSymbols.SessionFilter] = session.SessionId;
            link.Settings.Properties ??= new Fields();
            link.Settings.Properties[ServiceBusSymbols.LockedUntilUtc] = session.LockedUntil.UtcDateTime.Ticks;
        }

        lock (_consumers)
        {
            _consumers.Add(consumer);
        }

        link.SafeAddClosed((_, _) =>
        {
            lock (_consumers)
            {
                _consumers.Remove(consumer);
            }
        });
        consumer.Start();
    }

    private async Task<SessionLock> AcquireSessionAsync(SendingAmqpLink link, ServiceBusTestQueue queue, ConsumerLink consumer, string? requested)
    {
        var waiter = new SessionWaiter(queue, consumer);
        var session = _broker.Operate(now =>
        {
            var acquired = queue.TryAcquireSessionLocked(consumer, requested, now);
            if (acquired is null && requested is null)
            {
                _broker.AddSessionWaiterLocked(waiter);
            }

            return acquired;
        });
        if (session is not null)
        {
            return session;
        }

        if (requested is not null)
        {
            throw Error(ServiceBusSymbols.SessionCannotBeLocked, $"The requested session '{requested}' cannot be accepted. It may be locked by another receiver.");
        }

        var timeout = TimeSpan.FromSeconds(60);
        if (link.Settings.Properties is { } properties && properties.TryGetValue<uint>(ServiceBusSymbols.Timeout, out var milliseconds))
        {
            timeout = TimeSpan.FromMilliseconds(milliseconds);
        }

        link.SafeAddClosed((_, _) =>
        {
            if (_broker.RemoveSessionWaiter(waiter))
            {
                waiter.Fail(new OperationCanceledException("The link closed while waiting for a session."));
            }
        });
        try
        {
            return await waiter.Accepted.WaitAsync(timeout, _broker.TimeProvider).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            if (_broker.RemoveSessionWaiter(waiter))
            {
                throw Error(ServiceBusSymbols.Timeout, $"No session of '{queue.Path}' became available within {timeout}.");
            }

            return await waiter.Accepted.ConfigureAwait(false);
        }
    }

    private void AttachRequests(ReceivingAmqpLink link, string address, Func<AmqpMessage, Task<AmqpMessage>> handler)
    {
        link.RegisterMessageListener(message => _ = AnswerAsync(link, address, message, handler));
        link.SetTotalLinkCredit(100, true, true);
    }

    private async Task AnswerAsync(ReceivingAmqpLink link, string address, AmqpMessage request, Func<AmqpMessage, Task<AmqpMessage>> handler)
    {
        try
        {
            var replyTo = request.Properties?.ReplyTo?.ToString();
            var messageId = request.Properties?.MessageId;
            link.DisposeMessage(request, AmqpConstants.AcceptedOutcome, true, false);
            var response = await handler(request).ConfigureAwait(false);
            response.Properties.CorrelationId = messageId;
            response.Settled = true;
            if (replyTo is not null && _replyLinks.TryGetValue(ReplyKey(address, replyTo), out var replyLink))
            {
                replyLink.SendMessageNoWait(response, AmqpConstants.EmptyBinary, AmqpConstants.NullBinary);
            }
        }
        catch (Exception exception) when (exception is AmqpException or InvalidOperationException or ObjectDisposedException)
        {
            // The requester went away; it retries on a new link.
        }
        finally
        {
            request.Dispose();
        }
    }

    private static string ReplyKey(string address, string replyTo) => address + "\n" + replyTo;
}
