namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// A message's path (<see cref="PumpDelivery"/>'s one async method) as the handler and the transport see it, on one
/// thread on virtual time: the handler and its continuations in the processing lane with the starter's execution
/// context; the settlement in the lease lane (complete, or abandon after the failure is logged); the slot freed for a
/// receive while the settlement is on its way; the end after the broker's answer, in that lane, with the message out
/// of the pump's books before the handler-end signal.
/// </summary>
public class MessagePathTests
{
    private static readonly AsyncLocal<string?> Starter = new();

    [Theory]
    [InlineData(false, "complete")]
    [InlineData(true, "abandon")]
    public void Path_RunsEachStepInItsLane_InOrder_OnVirtualTime(bool handlerThrows, string settlement)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        queue.Send(new byte[] { 1 }, "m1");
        var trace = new List<string>();
        var logger = new ListLogger();
        PriorityMessagePump? pump = null;
        var startedAt = clock.GetUtcNow();
        string Now() => $"{(clock.GetUtcNow() - startedAt).TotalSeconds}s";
        string Lane() => PriorityScheduler.CurrentLane?.Name ?? "no lane";
        var source = new TracingSource(queue, trace, Now, Lane, () => pump!.GetStatistics().InFlight, logger, settleLatency: TimeSpan.FromSeconds(2));
        VirtualRun.Run(clock, async scheduler =>
        {
            pump = new PriorityMessagePump(
                source,
                async (context, token) =>
                {
                    trace.Add($"handler in {Lane()} at {Now()}, started by {Starter.Value}");
                    await Task.Delay(TimeSpan.FromSeconds(1), context.TimeProvider, token);
                    trace.Add($"handler resumed in {Lane()} at {Now()}");
                    if (handlerThrows)
                    {
                        throw new InvalidOperationException("refused");
                    }
                },
                scheduler,
                new MessagePumpOptions { MaxInFlight = 1, EmptyReceiveDelay = TimeSpan.FromSeconds(10) },
                logger);
            Starter.Value = "the starter";
            await pump.StartAsync();
            Starter.Value = null;
            await VirtualRun.WaitUntilAsync(() => source.Ended, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
        });

        var processing = pump!.ProcessingLane.Name;
        var lease = pump.LeaseLane.Name;
        string[] failureLogged = handlerThrows ? ["handler failure logged"] : [];
        trace.Should().Equal(
        [
            $"receive 1 in {lease} at 0s",
            $"handler in {processing} at 0s, started by the starter",
            $"handler resumed in {processing} at 1s",
            .. failureLogged,
            $"{settlement} sent in {lease} at 1s, in flight 1",
            $"receive 1 in {lease} at 1s", // the slot is free while the settlement is on its way
            $"{settlement} answered at 3s",
            $"handler ended in {lease} at 3s, in flight 0",
        ]);
        pump.GetStatistics().Should().BeEquivalentTo(new { Received = 1, Completed = handlerThrows ? 0 : 1, Abandoned = handlerThrows ? 1 : 0, HandlerFailures = handlerThrows ? 1 : 0, InFlight = 0 });
    }

    /// <summary>Records each receive, settle call and handler end of its messages into the trace.</summary>
    private sealed class TracingSource(
        InMemoryQueue inner, List<string> trace, Func<string> now, Func<string> lane, Func<int> inFlight, ListLogger logger, TimeSpan settleLatency) : IMessageSource
    {
        public bool Ended { get; private set; }

        public TimeSpan? LockDuration => inner.LockDuration;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            throw new NotSupportedException("the pump receives in batches");

        public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
        {
            if (!Ended)
            {
                trace.Add($"receive {maxMessages} in {lane()} at {now()}");
            }

            return [.. (await inner.ReceiveBatchAsync(maxMessages, cancellationToken)).Select(m => new Message(m, this))];
        }

        private void OnHandlerEnded()
        {
            trace.Add($"handler ended in {lane()} at {now()}, in flight {inFlight()}");
            Ended = true;
        }

        private async Task SettleAsync(string operation, Func<Task> call)
        {
            if (logger.Entries.Any(e => e.EventId.Id == 12 /* HandlerFailed */))
            {
                trace.Add("handler failure logged");
            }

            trace.Add($"{operation} sent in {lane()} at {now()}, in flight {inFlight()}");
            await Task.Delay(settleLatency, inner.TimeProvider);
            trace.Add($"{operation} answered at {now()}");
            await call();
        }

        private sealed class Message(ILeasedMessage inner, TracingSource source) : ILeasedMessage, IHandlerEndListener
        {
            public string MessageId => inner.MessageId;

            public ReadOnlyMemory<byte> Body => inner.Body;

            public int DeliveryCount => inner.DeliveryCount;

            public DateTimeOffset LockedUntil => inner.LockedUntil;

            public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => inner.RenewLockAsync(cancellationToken);

            public Task CompleteAsync(CancellationToken cancellationToken = default) => source.SettleAsync("complete", () => inner.CompleteAsync(cancellationToken));

            public Task AbandonAsync(CancellationToken cancellationToken = default) => source.SettleAsync("abandon", () => inner.AbandonAsync(cancellationToken));

            public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => source.SettleAsync("dead-letter", () => inner.DeadLetterAsync(reason, cancellationToken));

            public void OnHandlerEnded() => source.OnHandlerEnded();
        }
    }
}
