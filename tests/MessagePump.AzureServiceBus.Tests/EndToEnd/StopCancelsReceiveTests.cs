using System.Text;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;

/// <summary>
/// A pump's stop and the Service Bus receive under way: the stop cancels the call's wait (as the SDK's own processor
/// does) instead of waiting up to <see cref="ServiceBusSourceOptions.MaxWaitTime"/>, and the canceled call leaves no
/// credit behind that would lock a later message unseen. Outcomes and orderings only, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class StopCancelsReceiveTests
{
    [Fact]
    public async Task A_stop_cancels_the_receive_under_way_and_the_canceled_receive_locks_nothing()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(2), MaxDeliveryCount = 10 });

        // The receive waits longer than the test may run: only a cancellation ends it before the hang bound.
        var options = new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(2), MaxWaitTime = SbHarness.HangBound * 2 };
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), options);
        var watched = new WatchedSource(source);
        await using var scheduler = new PriorityTaskScheduler();
        await using var pump = new PriorityMessagePump(watched, (_, _) => Task.CompletedTask, scheduler, new MessagePumpOptions { Name = "sb-stop", ShutdownTimeout = TimeSpan.FromSeconds(1) });
        await pump.StartAsync();
        await watched.ReceiveBegan.WaitAsync(SbHarness.HangBound);

        var stop = pump.StopAsync();
        var ended = await watched.ReceiveEnded.WaitAsync(SbHarness.HangBound);
        await stop.WaitAsync(SbHarness.HangBound);

        ended.Should().BeAssignableTo<OperationCanceledException>("the stop cancels the receive's wait instead of waiting for its MaxWaitTime (found {0})", ended?.GetType().Name ?? "an answer");
        queue.LockedCount.Should().Be(0);

        // The canceled call left no credit on its link: a message sent now is not locked into that link's buffer, so
        // another receiver gets it at its first delivery (a message locked unseen would come back only when its lock
        // ran out, with DeliveryCount 2).
        queue.Send(Encoding.UTF8.GetBytes("late"), "late");
        await using var client = new ServiceBusClient(sb.Broker.ConnectionString, SbHarness.ClientOptions());
        await using var receiver = client.CreateReceiver("orders");
        var late = await receiver.ReceiveMessageAsync(SbHarness.HangBound);
        late.Should().NotBeNull();
        late!.MessageId.Should().Be("late");
        late.DeliveryCount.Should().Be(1, "the canceled receive did not lock it first");
        await receiver.CompleteMessageAsync(late);
        queue.CompletionsOf("late").Should().Be(1);
    }

    [Fact]
    public async Task Disposing_a_multi_session_source_ends_its_accept_and_its_session_s_receive_under_way()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(5), RequiresSession = true });
        queue.Send(Encoding.UTF8.GetBytes("a0"), "a0", sessionId: "a");

        // The accept of a second session and session a's next receive both wait longer than the test may run.
        var options = new ServiceBusSourceOptions { LockDuration = TimeSpan.FromSeconds(5), MaxWaitTime = SbHarness.HangBound * 2 };
        var source = await sb.Transport.OpenSessionsAsync(ServiceBusEntity.Queue("orders"), maxConcurrentSessions: 2, options);
        var first = await source.ReceiveBatchAsync(2).WaitAsync(SbHarness.HangBound);
        first.Select(m => m.MessageId).Should().Equal("a0");
        await first[0].CompleteAsync();

        // Session a is held and empty: this receive starts its next receive and the accept of another session, then is
        // canceled as a pump's stop cancels it; both calls to the broker are still waiting when the source is disposed.
        using (var stop = new CancellationTokenSource())
        {
            var receive = source.ReceiveBatchAsync(2, stop.Token);
            await stop.CancelAsync();
            await receive.Invoking(r => r).Should().ThrowAsync<OperationCanceledException>();
        }

        var disposed = source.DisposeAsync().AsTask();
        var ended = await Task.WhenAny(disposed, Task.Delay(SbHarness.HangBound));
        ended.Should().BeSameAs(disposed, "disposing ends the accept and the receive under way instead of waiting for their MaxWaitTime");
        await disposed;
        queue.CompletionsOf("a0").Should().Be(1);
        queue.LockedCount.Should().Be(0);
    }

    /// <summary>Forwards to the Service Bus source and tells when its first receive began and how it ended.</summary>
    private sealed class WatchedSource(IMessageSource inner) : IMessageSource
    {
        private readonly TaskCompletionSource _began = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource<Exception?> _ended = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task ReceiveBegan => _began.Task;

        /// <summary>The first receive's failure, or <see langword="null"/> when it answered.</summary>
        public Task<Exception?> ReceiveEnded => _ended.Task;

        public TimeSpan? LockDuration => inner.LockDuration;

        public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
        {
            var batch = await ReceiveBatchAsync(1, cancellationToken);
            return batch.Count > 0 ? batch[0] : null;
        }

        public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
        {
            var first = _began.TrySetResult();
            try
            {
                var received = await inner.ReceiveBatchAsync(maxMessages, cancellationToken);
                if (first)
                {
                    _ended.TrySetResult(null);
                }

                return received;
            }
            catch (Exception ex)
            {
                if (first)
                {
                    _ended.TrySetResult(ex);
                }

                throw;
            }
        }
    }
}
