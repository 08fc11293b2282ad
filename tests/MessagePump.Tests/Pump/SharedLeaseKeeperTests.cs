using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// The pump's one lease keeper: the leases that fall due together are renewed in one batch call, never
/// later than the per-message rule, a settled message's lease is dropped at once, a lease lost in a batch is handled as
/// a lost single renewal, and a batch answer that breaks the contract is reported and each lease concerned renewed
/// alone. One thread, virtual time.
/// </summary>
public class SharedLeaseKeeperTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Lock = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(20)]
    public void LeasesDueTogether_AreRenewedInOneCall_NeverLaterThanThePerMessageRule(int latencyMs)
    {
        var run = Run(200, latencyMs, Behaviour.Honest, handler: TimeSpan.FromSeconds(95));

        output.WriteLine($"{latencyMs} ms: {run.Broker}; batch calls {run.Source.Calls.Count}, slack at renewal {run.Source.Calls.Min(c => c.MinSlack)}..{run.Source.Calls.Max(c => c.MaxSlack)}");
        run.Pump.LeasesLost.Should().Be(0);
        run.Broker.Completed.Should().Be(200);
        run.Broker.Renewals.Should().Be(200 * 4, "each 95 s handler needs its 30 s lock renewed four times (every 20 s)");
        run.Broker.RenewCalls.Should().BeLessThanOrEqualTo(run.Broker.Renewals / 20, "leases received together fall due together and share a call");
        run.Source.Calls.Should().OnlyContain(c => c.MinSlack >= TimeSpan.FromSeconds(10), "never later than the per-message rule: min(half the lock left, 10 s) before expiry");
        run.Source.Calls.Should().OnlyContain(c => c.MaxSlack <= TimeSpan.FromSeconds(11) + TimeSpan.FromMilliseconds(latencyMs), "at most the 1 s window earlier than the rule");
        run.Pump.ShouldMatch(run.Broker);
    }

    [Fact]
    public void ASettledMessage_IsDroppedFromTheKeeperAtOnce_NoRenewalAfterItsAnswer()
    {
        var run = Run(50, 1, Behaviour.Honest, handler: TimeSpan.FromSeconds(5));

        run.Broker.Renewals.Should().Be(0, "every message was settled long before its first renewal was due");
        run.Broker.RenewCalls.Should().Be(0);
        run.Broker.LeaseLostErrors.Should().Be(0);
        run.Pump.Should().BeEquivalentTo(new { Completed = 50, LeasesLost = 0, InFlight = 0 });
    }

    [Fact]
    public void ALeaseLostInABatch_IsHandledAsALostSingleRenewal_TheOthersAreRenewed()
    {
        var run = Run(10, 1, Behaviour.LoseFirstMessage, handler: TimeSpan.FromSeconds(45));

        run.Pump.LeasesLost.Should().Be(1, "the broker answered 'lease lost' for one message of the batch");
        run.Logger.Entries.Count(e => e.EventId.Id == 22).Should().Be(1);
        run.Pump.Completed.Should().Be(10, "the lost one is delivered again and completed; the others completed on their first delivery");
        run.Broker.Received.Should().Be(11);
        run.HandlerCancellations.Should().Be(1, "the lost message's handler was canceled");
    }

    [Theory]
    [InlineData(Behaviour.WrongCount)]
    [InlineData(Behaviour.WrongMessages)]
    [InlineData(Behaviour.UnexpectedFailure)]
    public void ABatchAnswerThatBreaksTheContract_IsReported_AndEachLeaseIsRenewedAlone_NothingLost(Behaviour behaviour)
    {
        var run = Run(20, 1, behaviour, handler: TimeSpan.FromSeconds(45));

        output.WriteLine(run.Logger.Entries.FirstOrDefault(e => e.EventId.Id == 34).Exception?.Message);
        run.Logger.Entries.Should().Contain(e => e.EventId.Id == 34, "the broken answer is reported");
        run.Logger.Entries.Where(e => e.EventId.Id == 34).Should().OnlyContain(e => e.Exception!.Message.Contains("BadBatches.RenewBatchAsync answered", StringComparison.Ordinal));
        run.Pump.LeasesLost.Should().Be(0);
        run.Pump.Completed.Should().Be(20);
        run.Broker.Received.Should().Be(20, "no message was delivered twice");
        run.Source.SingleRenewals.Should().BePositive("each lease answered wrongly was renewed alone");
        run.Pump.Renewals.Should().Be(20 * 2, "each 45 s handler needs two renewals, counted once each");
    }

    [Fact]
    public void AFailedBatchCall_IsRetriedAsOneBatch_AfterTheRetryDelay()
    {
        var run = Run(20, 1, Behaviour.FailFirstCall, handler: TimeSpan.FromSeconds(25));

        run.Pump.Should().BeEquivalentTo(new { LeasesLost = 0, Completed = 20, TransientRetries = 1 });
        run.Logger.Entries.Count(e => e.EventId.Id == 21).Should().Be(1, "one failed call, one retry");
        run.Source.SingleRenewals.Should().Be(0);
        run.Broker.Renewals.Should().Be(20);
    }

    public enum Behaviour
    {
        Honest,
        LoseFirstMessage,
        WrongCount,
        WrongMessages,
        UnexpectedFailure,
        FailFirstCall,
    }

    private static RunResult Run(int messages, int latencyMs, Behaviour behaviour, TimeSpan handler)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock, Latency = TimeSpan.FromMilliseconds(latencyMs) });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[] { (byte)i }, $"m{i}");
        }

        var source = new BadBatches(queue, clock, behaviour);
        var logger = new ListLogger();
        var cancellations = 0;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(
                source,
                async (context, token) =>
                {
                    try
                    {
                        await Task.Delay(handler, context.TimeProvider, token);
                    }
                    catch (OperationCanceledException)
                    {
                        cancellations++;
                        throw;
                    }
                },
                scheduler,
                new MessagePumpOptions { MaxInFlight = messages },
                logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, clock, TimeSpan.FromHours(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        return new RunResult(stats!, queue.GetStatistics(), source, logger, cancellations);
    }

    private sealed record RunResult(MessagePumpStatistics Pump, InMemoryQueueStatistics Broker, BadBatches Source, ListLogger Logger, int HandlerCancellations);

    /// <summary>The in-memory queue, whose batch renewal answers as <see cref="Behaviour"/> says, recording each call's slack.</summary>
    private sealed class BadBatches(InMemoryQueue inner, TimeProvider clock, Behaviour behaviour) : IMessageSource
    {
        private bool _misbehaved;
        private int _forwarded;

        public List<(TimeSpan MinSlack, TimeSpan MaxSlack)> Calls { get; } = [];

        /// <summary>Gets the renew calls that reached the broker one lease at a time (all of them but the batches forwarded).</summary>
        public int SingleRenewals => (int)inner.GetStatistics().RenewCalls - _forwarded;

        public TimeSpan? LockDuration => inner.LockDuration;

        public bool CompletesBatchesNatively => true;

        public bool RenewsBatchesNatively => true;

        public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) => inner.ReceiveAsync(cancellationToken);

        public Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default) => inner.ReceiveBatchAsync(maxMessages, cancellationToken);

        public Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default) => inner.CompleteBatchAsync(messages, cancellationToken);

        public async Task<IReadOnlyList<LeaseRenewal>> RenewBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
        {
            var now = clock.GetUtcNow();
            Calls.Add((messages.Min(m => m.LockedUntil) - now, messages.Max(m => m.LockedUntil) - now));
            var first = !_misbehaved;
            _misbehaved = true;
            if (first && behaviour == Behaviour.FailFirstCall)
            {
                throw new TransientTransportException("The first batch renewal fails.");
            }

            if (first && behaviour == Behaviour.LoseFirstMessage)
            {
                // Released at the broker (not through the message, whose settle calls a pump owns go through the pump): its renewal answers "lease lost".
                await inner.AbandonAsync(((InMemoryMessage)messages[0]).LockToken, cancellationToken);
            }

            _forwarded++;
            var outcomes = await inner.RenewBatchAsync(messages, cancellationToken);
            return (behaviour, first) switch
            {
                (Behaviour.WrongCount, _) => [.. outcomes.Skip(1)],
                (Behaviour.WrongMessages, _) => [.. outcomes.Select(_ => LeaseRenewal.Renewed(now + TimeSpan.FromHours(1)))],
                (Behaviour.UnexpectedFailure, _) => [.. outcomes.Select(_ => LeaseRenewal.Failed(new InvalidOperationException("not a contract failure")))],
                _ => outcomes,
            };
        }
    }
}
