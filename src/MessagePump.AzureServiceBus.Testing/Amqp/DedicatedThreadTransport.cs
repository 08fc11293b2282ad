using System.Net.Sockets;
using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Transport;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>
/// One accepted connection of the broker, read by a thread of its own and written synchronously by the caller, so that
/// no part of the broker's I/O waits for a thread-pool thread. A real Service Bus namespace runs on other machines:
/// a consumer that starves its own thread pool must not also slow the broker down, or a renewal would be judged late
/// for a delay that only the test's broker had.
/// </summary>
/// <remarks>
/// A read completes synchronously when bytes are already waiting; otherwise it is handed to the connection's reader
/// thread, which blocks on the socket and then runs the library's callback (frame decoding and the broker's handling
/// of the frame) on that thread.
/// </remarks>
internal sealed class DedicatedThreadTransport : TransportBase
{
    private readonly Socket _socket;
    private readonly Thread _reader;
    private readonly object _gate = new(); // Monitor.Wait/Pulse need an object, not a Lock
    private TransportAsyncCallbackArgs? _pendingRead;
    private volatile bool _closed;

    public DedicatedThreadTransport(Socket socket)
        : base("tcp")
    {
        _socket = socket;
        _socket.NoDelay = true;
        LocalEndPoint = socket.LocalEndPoint?.ToString() ?? string.Empty;
        RemoteEndPoint = socket.RemoteEndPoint?.ToString() ?? string.Empty;
        _reader = new Thread(ReadLoop) { IsBackground = true, Name = $"ServiceBusTestBroker reader {RemoteEndPoint}" };
        _reader.Start();
    }

    public override string LocalEndPoint { get; }

    public override string RemoteEndPoint { get; }

    public override void SetMonitor(ITransportMonitor usageMeter)
    {
        // No usage metering in the test broker.
    }

    public override bool WriteAsync(TransportAsyncCallbackArgs args)
    {
        try
        {
            if (args.Buffer is { } buffer)
            {
                SendAll(new ArraySegment<byte>(buffer, args.Offset, args.Count));
            }
            else
            {
                foreach (var segment in args.ByteBufferList)
                {
                    SendAll(new ArraySegment<byte>(segment.Buffer, segment.Offset, segment.Length));
                }
            }

            args.BytesTransfered = args.Count;
            args.Exception = null;
        }
        catch (Exception exception) when (exception is SocketException or ObjectDisposedException)
        {
            args.Exception = exception;
        }

        args.CompletedSynchronously = true;
        return false;
    }

    public override bool ReadAsync(TransportAsyncCallbackArgs args)
    {
        if (!_closed && _socket.Available > 0)
        {
            Receive(args);
            args.CompletedSynchronously = true;
            return false;
        }

        args.CompletedSynchronously = false;
        lock (_gate)
        {
            _pendingRead = args;
            Monitor.Pulse(_gate);
        }

        return true;
    }

    protected override bool CloseInternal()
    {
        Shut();
        try
        {
            _socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception exception) when (exception is SocketException or ObjectDisposedException)
        {
            // Already gone.
        }

        _socket.Dispose();
        return true;
    }

    protected override void AbortInternal()
    {
        Shut();
        _socket.Dispose();
    }

    private void Shut()
    {
        lock (_gate)
        {
            _closed = true;
            Monitor.Pulse(_gate); // wakes the reader if it waits for a request; it sees the transport closed
        }
    }

    private void SendAll(ArraySegment<byte> segment)
    {
        var sent = 0;
        while (sent < segment.Count)
        {
            sent += _socket.Send(segment.Array!, segment.Offset + sent, segment.Count - sent, SocketFlags.None);
        }
    }

    private void Receive(TransportAsyncCallbackArgs args)
    {
        try
        {
            args.BytesTransfered = _socket.Receive(args.Buffer, args.Offset, args.Count, SocketFlags.None);
            args.Exception = null;
        }
        catch (Exception exception) when (exception is SocketException or ObjectDisposedException)
        {
            args.BytesTransfered = 0;
            args.Exception = exception;
        }
    }

    private void ReadLoop()
    {
        while (true)
        {
            TransportAsyncCallbackArgs args;
            lock (_gate)
            {
                while (_pendingRead is null && !_closed)
                {
                    Monitor.Wait(_gate);
                }

                if (_pendingRead is null)
                {
                    return; // closed with no read pending
                }

                args = _pendingRead;
                _pendingRead = null;
            }

            if (_closed)
            {
                args.BytesTransfered = 0;
                args.Exception = new ObjectDisposedException(nameof(DedicatedThreadTransport));
            }
            else
            {
                Receive(args);
            }

            try
            {
                args.CompletedCallback(args);
            }
            catch (Exception exception) when (exception is not OutOfMemoryException)
            {
                this.SafeClose(exception);
                return;
            }
        }
    }
}
