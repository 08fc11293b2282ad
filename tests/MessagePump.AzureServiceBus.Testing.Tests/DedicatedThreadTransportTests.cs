using System.Net;
using System.Net.Sockets;
using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Transport;
using PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>
/// The broker's own I/O does not wait for the thread pool: it accepts, reads and answers on threads of its own, so a
/// consumer that starves the pool of the process the broker runs in does not slow the broker down.
/// </summary>
public sealed class DedicatedThreadTransportTests
{
    [Fact]
    public async Task Accepts_and_reads_on_threads_of_its_own_and_writes_synchronously()
    {
        var accepted = new TaskCompletionSource<(TransportBase Transport, bool OnPoolThread)>(TaskCreationOptions.RunContinuationsAsynchronously);
        var port = FreePort();
        var listener = new DedicatedThreadTransportListener(new IPEndPoint(IPAddress.Loopback, port));
        listener.Listen((_, args) => accepted.TrySetResult((args.Transport, Thread.CurrentThread.IsThreadPoolThread)));
        try
        {
            using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            await client.ConnectAsync(IPAddress.Loopback, port);
            var (transport, acceptedOnPool) = await accepted.Task.WaitAsync(BrokerHarness.HangBound);
            acceptedOnPool.Should().BeFalse();

            // A read asked for before any byte arrived is pending, and completes on the connection's reader thread.
            var read = new TaskCompletionSource<(int Bytes, bool OnPoolThread, Exception? Error)>(TaskCreationOptions.RunContinuationsAsynchronously);
            var args = new TransportAsyncCallbackArgs();
            args.SetBuffer(new byte[16], 0, 16);
            args.CompletedCallback = a => read.TrySetResult((a.BytesTransfered, Thread.CurrentThread.IsThreadPoolThread, a.Exception));
            transport.ReadAsync(args).Should().BeTrue();
            await client.SendAsync(new byte[] { 1, 2, 3 });
            var (bytes, readOnPool, error) = await read.Task.WaitAsync(BrokerHarness.HangBound);
            error.Should().BeNull();
            readOnPool.Should().BeFalse();
            bytes.Should().Be(3);
            args.Buffer.AsSpan(0, 3).ToArray().Should().Equal(1, 2, 3);

            // A write completes on the calling thread.
            var write = new TransportAsyncCallbackArgs();
            write.SetBuffer(new byte[] { 4, 5 }, 0, 2);
            write.CompletedCallback = _ => throw new InvalidOperationException("A synchronous write must not call back.");
            transport.WriteAsync(write).Should().BeFalse();
            write.Exception.Should().BeNull();
            write.BytesTransfered.Should().Be(2);
            var received = new byte[2];
            var got = 0;
            while (got < 2)
            {
                got += await client.ReceiveAsync(received.AsMemory(got)).AsTask().WaitAsync(BrokerHarness.HangBound);
            }

            received.Should().Equal(4, 5);

            // Closing the transport ends a pending read (no byte, so the connection sees the end of the stream).
            var closedRead = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
            var last = new TransportAsyncCallbackArgs();
            last.SetBuffer(new byte[16], 0, 16);
            last.CompletedCallback = a => closedRead.TrySetResult(a.BytesTransfered);
            transport.ReadAsync(last).Should().BeTrue();
            transport.SafeClose();
            (await closedRead.Task.WaitAsync(BrokerHarness.HangBound)).Should().Be(0);
        }
        finally
        {
            listener.SafeClose();
        }
    }

    private static int FreePort()
    {
        using var probe = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        probe.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)probe.LocalEndPoint!).Port;
    }
}
