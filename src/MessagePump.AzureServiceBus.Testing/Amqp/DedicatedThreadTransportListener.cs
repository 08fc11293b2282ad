using System.Net;
using System.Net.Sockets;
using Microsoft.Azure.Amqp.Transport;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>
/// The broker's TCP listener: accepts on a thread of its own and gives each connection a <see cref="DedicatedThreadTransport"/>,
/// so that accepting, reading and writing never wait for the thread pool of the process the broker runs in.
/// </summary>
internal sealed class DedicatedThreadTransportListener : TransportListener
{
    private readonly IPEndPoint _endPoint;
    private Socket? _socket;

    public DedicatedThreadTransportListener(IPEndPoint endPoint)
        : base("tcp-listener")
    {
        _endPoint = endPoint;
    }

    protected override void OnListen()
    {
        var socket = new Socket(_endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        try
        {
            socket.Bind(_endPoint);
            socket.Listen(64);
        }
        catch
        {
            socket.Dispose();
            throw;
        }

        _socket = socket;
        new Thread(() => AcceptLoop(socket)) { IsBackground = true, Name = $"ServiceBusTestBroker listener {_endPoint}" }.Start();
    }

    protected override bool CloseInternal()
    {
        _socket?.Dispose();
        return true;
    }

    protected override void AbortInternal() => _socket?.Dispose();

    private void AcceptLoop(Socket listening)
    {
        while (true)
        {
            Socket accepted;
            try
            {
                accepted = listening.Accept();
            }
            catch (Exception exception) when (exception is SocketException or ObjectDisposedException)
            {
                return; // the listener was closed
            }

            var transport = new DedicatedThreadTransport(accepted);
            transport.Open();
            OnTransportAccepted(new TransportAsyncCallbackArgs { Transport = transport, CompletedSynchronously = false });
        }
    }
}
