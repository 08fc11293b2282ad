using System.Net;
using System.Net.Sockets;

namespace PriorityAsync.MessagePump.PostgreSql.Tests.Support;

/// <summary>
/// A TCP forwarder on 127.0.0.1 in front of the real server, so a test can make "the server" go away (every
/// connection reset, new ones refused) and come back on the same port.
/// </summary>
internal sealed class LoopbackProxy : IAsyncDisposable
{
    private readonly IPEndPoint _target;
    private readonly object _gate = new();
    private readonly List<Socket> _open = [];
    private TcpListener? _listener;

    public LoopbackProxy(string host, int port)
    {
        _target = new IPEndPoint(IPAddress.Parse(host == "localhost" ? "127.0.0.1" : host), port);
        var probe = new TcpListener(IPAddress.Loopback, 0);
        probe.Start();
        Port = ((IPEndPoint)probe.LocalEndpoint).Port;
        probe.Stop();
        Start();
    }

    public int Port { get; }

    public void Start()
    {
        lock (_gate)
        {
            var listener = new TcpListener(IPAddress.Loopback, Port);
            listener.Server.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            listener.Start();
            _listener = listener;
            _ = AcceptAsync(listener);
        }
    }

    /// <summary>Resets every forwarded connection and refuses new ones until <see cref="Start"/>.</summary>
    public void Stop()
    {
        lock (_gate)
        {
            _listener?.Stop();
            _listener = null;
            foreach (var socket in _open)
            {
                try
                {
                    socket.LingerState = new LingerOption(true, 0); // RST, like a crashed server
                    socket.Close();
                }
                catch (ObjectDisposedException)
                {
                }
            }

            _open.Clear();
        }
    }

    public ValueTask DisposeAsync()
    {
        Stop();
        return ValueTask.CompletedTask;
    }

    private async Task AcceptAsync(TcpListener listener)
    {
        while (true)
        {
            Socket client;
            try
            {
                client = await listener.AcceptSocketAsync();
            }
            catch (Exception)
            {
                return; // stopped
            }

            var server = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            try
            {
                await server.ConnectAsync(_target);
            }
            catch (SocketException)
            {
                client.Close();
                server.Dispose();
                continue;
            }

            lock (_gate)
            {
                if (_listener != listener)
                {
                    client.Close();
                    server.Close();
                    return;
                }

                _open.Add(client);
                _open.Add(server);
            }

            _ = PipeAsync(client, server);
            _ = PipeAsync(server, client);
        }
    }

    private static async Task PipeAsync(Socket from, Socket to)
    {
        var buffer = new byte[16 * 1024];
        try
        {
            while (true)
            {
                var read = await from.ReceiveAsync(buffer, SocketFlags.None);
                if (read == 0)
                {
                    break;
                }

                await to.SendAsync(buffer.AsMemory(0, read), SocketFlags.None);
            }
        }
        catch (Exception)
        {
        }

        try
        {
            from.Close();
            to.Close();
        }
        catch (Exception)
        {
        }
    }
}
