using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Threading.Channels;

namespace PriorityAsync.Benchmarks.ServiceBus;

/// <summary>
/// A loopback TCP relay that holds every chunk of bytes for a fixed one-way delay before passing it on, in order, both
/// ways: a network between the Service Bus client and the in-process test broker, so that a round trip costs twice the
/// delay as it would to a real namespace. Each direction of each connection is a reader that stamps chunks and a writer
/// that sends each one once its time has come (timers round up to whole milliseconds, so a chunk may wait up to about
/// 1 ms longer), so the delay is added once per chunk, not once per queued chunk.
/// </summary>
internal sealed class LatencyProxy : IAsyncDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly int _targetPort;
    private readonly TimeSpan _delay;
    private readonly CancellationTokenSource _stop = new();
    private readonly List<Task> _relays = [];
    private readonly Task _accepting;

    public LatencyProxy(int targetPort, TimeSpan delay)
    {
        _targetPort = targetPort;
        _delay = delay;
        _listener.Start();
        _accepting = AcceptAsync();
    }

    /// <summary>Gets the loopback port clients connect to.</summary>
    public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

    /// <summary>Returns <paramref name="connectionString"/> with its endpoint's port replaced by the proxy's.</summary>
    public string Route(string connectionString, int brokerPort) =>
        connectionString.Replace($"127.0.0.1:{brokerPort}", $"127.0.0.1:{Port}", StringComparison.Ordinal);

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _listener.Stop();
        await Task.WhenAll([_accepting, .. _relays]).ContinueWith(static _ => { }, TaskScheduler.Default);
        _stop.Dispose();
    }

    private async Task AcceptAsync()
    {
        try
        {
            while (true)
            {
                var client = await _listener.AcceptTcpClientAsync(_stop.Token);
                var server = new TcpClient { NoDelay = true };
                await server.ConnectAsync(IPAddress.Loopback, _targetPort, _stop.Token);
                client.NoDelay = true;
                lock (_relays)
                {
                    _relays.Add(RelayAsync(client, server));
                }
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            // stopped
        }
    }

    private async Task RelayAsync(TcpClient client, TcpClient server)
    {
        using (client)
        using (server)
        {
            var up = DelayAsync(client.GetStream(), server.GetStream());
            var down = DelayAsync(server.GetStream(), client.GetStream());
            await Task.WhenAny(up, down);
            client.Close();
            server.Close();
            await Task.WhenAll(up, down).ContinueWith(static _ => { }, TaskScheduler.Default);
        }
    }

    private async Task DelayAsync(NetworkStream from, NetworkStream to)
    {
        var chunks = Channel.CreateUnbounded<(long DueAt, byte[] Bytes)>(new UnboundedChannelOptions { SingleReader = true, SingleWriter = true });
        var writing = WriteWhenDueAsync(chunks.Reader, to);
        try
        {
            var buffer = new byte[64 * 1024];
            while (true)
            {
                var read = await from.ReadAsync(buffer, _stop.Token);
                if (read == 0)
                {
                    break;
                }

                chunks.Writer.TryWrite((Stopwatch.GetTimestamp() + (long)(_delay.TotalSeconds * Stopwatch.Frequency), buffer[..read]));
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or IOException or ObjectDisposedException)
        {
            // the connection or the proxy closed
        }

        chunks.Writer.TryComplete();
        await writing;
    }

    private async Task WriteWhenDueAsync(ChannelReader<(long DueAt, byte[] Bytes)> chunks, NetworkStream to)
    {
        try
        {
            await foreach (var (dueAt, bytes) in chunks.ReadAllAsync(_stop.Token))
            {
                var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), dueAt);
                if (wait > TimeSpan.Zero)
                {
                    // Whole milliseconds, rounded up: Task.Delay truncates a fraction, and a chunk must not leave early.
                    await Task.Delay(TimeSpan.FromMilliseconds(Math.Ceiling(wait.TotalMilliseconds)), _stop.Token);
                }

                await to.WriteAsync(bytes, _stop.Token);
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException or IOException or ObjectDisposedException)
        {
            // the connection or the proxy closed
        }
    }
}
