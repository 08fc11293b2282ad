namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// Batches (docs/message-pump.md): every message of a receive batch gets its lease keeper at the answer, ahead of
/// processing work ready at the same moment; the in-memory queue's batch calls; a transport that breaks the batch
/// contract is reported and nothing it locked is left behind. Virtual time, one thread.
/// </summary>
public class BatchTests
{
    private static readonly TimeSpan Slice = TimeSpan.FromMilliseconds(100);

    [Fact]
    public void ReceiveBatch_EveryMessageStartsAtTheAnswer_AheadOfProcessingReadyAtTheSameMoment()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions
        {
            LockDuration = TimeSpan.FromSeconds(2),
            Latency = TimeSpan.FromMilliseconds(20),
        });
        for (var i = 0; i < 60; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        var logger = new ListLogger();
        var answers = new List<(DateTimeOffset At, int Count)>();
        var starts = new List<DateTimeOffset>();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var processing = scheduler.GetLane(LanePriority.Processing);
            var source = new BurstOnLargeAnswer(queue, processing, clock, answers);
            var pump = new PriorityMessagePump(source, (_, _) => Task.CompletedTask, scheduler, logger: new StartRecorder(clock, starts));
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 60, clock, TimeSpan.FromMinutes(10), TimeSpan.FromMilliseconds(10));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        answers.Should().Contain(a => a.Count >= 4, "the ask doubles while no-op handlers leave the thread free within a round trip");
        starts.Should().HaveCount(60);
        var next = 0;
        foreach (var (at, count) in answers)
        {
            for (var i = 0; i < count; i++, next++)
            {
                (starts[next] - at).Should().BeLessThanOrEqualTo(Slice, $"message {i + 1} of a batch of {count} starts at the answer, ahead of the processing burst");
            }
        }

        stats!.LeasesLost.Should().Be(0);
        queue.GetStatistics().Received.Should().Be(60, "no message was delivered twice");
    }

    [Fact]
    public async Task InMemoryQueue_ReceiveBatch_OneLatencyForTheBatch_OldestFirst_AtMostAsked()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { Latency = TimeSpan.FromMilliseconds(50) });
        for (var i = 0; i < 5; i++)
        {
            queue.Send(new byte[] { (byte)i }, $"m{i}");
        }

        var batch = queue.ReceiveBatchAsync(3);
        batch.IsCompleted.Should().BeFalse();
        clock.Advance(TimeSpan.FromMilliseconds(50));
        (await batch).Select(m => m.MessageId).Should().Equal("m0", "m1", "m2");

        var rest = queue.ReceiveBatchAsync(10);
        clock.Advance(TimeSpan.FromMilliseconds(50));
        (await rest).Select(m => m.MessageId).Should().Equal("m3", "m4");

        var empty = queue.ReceiveBatchAsync(10);
        clock.Advance(TimeSpan.FromMilliseconds(50));
        (await empty).Should().BeEmpty();

        ((Action)(() => queue.ReceiveBatchAsync(0))).Should().Throw<ArgumentOutOfRangeException>().WithParameterName("maxMessages");
    }

    [Fact]
    public async Task InMemoryQueue_CompleteBatch_OutcomePerMessage_InOrder()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(1) });
        for (var i = 0; i < 3; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        var early = await queue.ReceiveBatchAsync(2);
        clock.Advance(TimeSpan.FromSeconds(2)); // both expire
        var late = await queue.ReceiveBatchAsync(3); // redelivered m0, m1 and first delivery of m2
        late.Should().HaveCount(3);
        await late[1].CompleteAsync(); // already settled before the batch

        var outcomes = await queue.CompleteBatchAsync([late[0], early[1], late[1], late[2]]);

        outcomes.Should().HaveCount(4);
        outcomes[0].Should().BeNull();
        outcomes[1].Should().BeOfType<LeaseLostException>("its lock expired and the message was delivered again");
        outcomes[2].Should().BeOfType<LeaseLostException>("it was already completed");
        outcomes[3].Should().BeNull();
        queue.GetStatistics().Completed.Should().Be(3);

        var foreign = new InMemoryTransport(clock).CreateQueue("other");
        foreign.Send(new byte[] { 9 });
        var stranger = (await foreign.ReceiveAsync())!;
        ((Action)(() => queue.CompleteBatchAsync([stranger]))).Should().Throw<ArgumentException>().WithParameterName("messages");
        ((Action)(() => queue.CompleteBatchAsync([]))).Should().Throw<ArgumentException>().WithParameterName("messages");
    }

    [Fact]
    public void SourceReturningMoreThanAsked_EveryMessageProcessed_ContractReported()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q");
        for (var i = 0; i < 9; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        var logger = new ListLogger();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(new Oversized(queue), (_, _) => Task.CompletedTask, scheduler, logger: logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 9, clock, TimeSpan.FromMinutes(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        stats!.Completed.Should().Be(9);
        queue.GetStatistics().InFlight.Should().Be(0, "nothing it locked is left locked");
        logger.Entries.Should().Contain(e => e.EventId.Id == 33 && e.Exception is InvalidOperationException && e.Exception.Message.Contains("at most", StringComparison.Ordinal));
    }

    [Fact]
    public void SourceReturningTooFewOutcomes_EachMessageCompletedAlone_ContractReported()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { Latency = TimeSpan.FromMilliseconds(5) });
        for (var i = 0; i < 20; i++)
        {
            queue.Send(new byte[] { (byte)i });
        }

        var logger = new ListLogger();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(new ShortOutcomes(queue), (_, _) => Task.CompletedTask, scheduler, logger: logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 20, clock, TimeSpan.FromMinutes(1), TimeSpan.FromMilliseconds(10));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        stats!.Completed.Should().Be(20);
        stats.LeasesLost.Should().Be(0);
        queue.GetStatistics().Completed.Should().Be(20);
        logger.Entries.Should().Contain(e => e.EventId.Id == 33 && e.Exception!.Message.Contains("outcomes", StringComparison.Ordinal));
        logger.Entries.Where(e => e.EventId.Id == 21).Should().NotBeEmpty("a batch failing transiently is retried alone")
            .And.OnlyContain(e => e.Message.Contains(": complete of ", StringComparison.Ordinal));
    }

    /// <summary>Makes a burst of ten processing slices ready the instant the broker answers with 4 or more messages.</summary>
    private sealed class BurstOnLargeAnswer(InMemoryQueue inner, Lane processing, VirtualTimeProvider clock, List<(DateTimeOffset, int)> answers) : IMessageSource
    {
        public TimeSpan? LockDuration => inner.LockDuration;

        public bool CompletesBatchesNatively => true;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => throw new NotSupportedException("the pump receives in batches");

        public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
        {
            var batch = await inner.ReceiveBatchAsync(maxMessages, cancellationToken);
            if (batch.Count > 0)
            {
                answers.Add((clock.GetUtcNow(), batch.Count));
            }

            if (batch.Count >= 4)
            {
                for (var i = 0; i < 10; i++)
                {
                    processing.SynchronizationContext.Post(_ => clock.Advance(Slice), null);
                }
            }

            return batch;
        }

        public Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default) =>
            inner.CompleteBatchAsync(messages, cancellationToken);
    }

    /// <summary>Answers every receive with up to three messages, whatever was asked.</summary>
    private sealed class Oversized(InMemoryQueue inner) : IMessageSource
    {
        public TimeSpan? LockDuration => inner.LockDuration;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => inner.ReceiveAsync(cancellationToken);

        public Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default) =>
            inner.ReceiveBatchAsync(maxMessages + 2, cancellationToken);
    }

    /// <summary>Completes every message of a batch but reports one outcome fewer.</summary>
    private sealed class ShortOutcomes(InMemoryQueue inner) : IMessageSource
    {
        public TimeSpan? LockDuration => inner.LockDuration;

        public bool CompletesBatchesNatively => true;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => inner.ReceiveAsync(cancellationToken);

        public Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default) =>
            inner.ReceiveBatchAsync(maxMessages, cancellationToken);

        public async Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
        {
            // Completes none (so the pump's single retry completes each), and reports too few outcomes.
            await Task.Delay(TimeSpan.FromMilliseconds(5), inner.TimeProvider, cancellationToken); // a round trip: completions overlap it
            return messages.Count > 1 ? new Exception?[messages.Count - 1] : [new TransientTransportException("try alone")];
        }
    }

    /// <summary>Records, on the virtual clock, when the pump started each message (its "received" event, id 10).</summary>
    private sealed class StartRecorder(VirtualTimeProvider clock, List<DateTimeOffset> starts) : Microsoft.Extensions.Logging.ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull => null;

        public bool IsEnabled(Microsoft.Extensions.Logging.LogLevel logLevel) => true;

        public void Log<TState>(Microsoft.Extensions.Logging.LogLevel logLevel, Microsoft.Extensions.Logging.EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (eventId.Id == 10)
            {
                starts.Add(clock.GetUtcNow());
            }
        }
    }
}
