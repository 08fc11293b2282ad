using System.Net;
using System.Net.Sockets;
using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Framing;
using Microsoft.Azure.Amqp.Transport;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

internal sealed partial class AmqpHost
{
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
}
