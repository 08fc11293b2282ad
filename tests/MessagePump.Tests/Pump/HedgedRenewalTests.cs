namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// Renewals sent while answers wait: a 2 s lock whose renew requests reach the broker at once but whose answers take
/// <c>answerDelay</c> to come back (the Service Bus SDK's answer crossing a starved thread pool). With 2.2 s — longer
/// than the whole lock — a keeper that waits for each answer before renewing again sends its next renewal after the
/// lock ended and loses the lease; the next renewal, due one pipeline spacing after the last one sent (the source
/// knows its lock duration), keeps it, and so it does with answers 3 locks late. With 100 ms answers no renewal is sent
/// while another is under way. Virtual time, one thread.
/// </summary>
public class HedgedRenewalTests
{
    private const int HedgedEvent = 35;

    [Fact]
    public void AnswersSlowerThanTheLock_HedgedRenewalsKeepTheLease()
    {
        var (stats, queue, source, logger) = RunOne(TimeSpan.FromMilliseconds(2200));

        stats.LeasesLost.Should().Be(0, $"renewals sent at (s): {string.Join(", ", source.SentAt)}; log:{Environment.NewLine}{logger}");
        queue.GetStatistics().Completed.Should().Be(1);
        logger.Entries.Should().Contain(e => e.EventId.Id == HedgedEvent, "the first renewal is still unanswered when the rule falls due again");
        source.MaxInFlight.Should().BeLessThanOrEqualTo(LeaseKeeper.MaxRenewalsInFlight);
    }

    [Fact]
    public void AnswersThreeLocksLate_RenewalsGoOutOnTimeAndKeepTheLease()
    {
        var (stats, queue, source, logger) = RunOne(TimeSpan.FromSeconds(6));

        stats.LeasesLost.Should().Be(0, $"renewals sent at (s): {string.Join(", ", source.SentAt)}; log:{Environment.NewLine}{logger}");
        queue.GetStatistics().Completed.Should().Be(1);
        source.SentAt.Should().HaveCountGreaterThan(8, "a 10 s handler on a 2 s lock");
        var gaps = source.SentAt.Zip(source.SentAt.Skip(1), (earlier, later) => later - earlier).ToList();
        gaps.Should().OnlyContain(gap => gap <= 1.0 + 1e-9, $"each renewal goes out one spacing (lock - buffer = 1 s) after the one before, answered or not; sent at (s): {string.Join(", ", source.SentAt)}");
        source.MaxInFlight.Should().BeInRange(3, LeaseKeeper.MaxRenewalsInFlight, "6 s answers at one renewal a second");
    }

    [Fact]
    public void AnswersLateButWithinTheLock_AtMostTwoRenewCallsPerLockDuration()
    {
        // 700 ms answers on a 2 s lock whose renewals reach the broker at once: the lock the broker holds is the one each
        // renewal set when it was sent, so the next renewal is due by the rule from that expiry, not at once because the
        // answer took long. Before, the answer's whole round trip counted as slack a renewal needs (3 x 700 ms, more
        // than the lock left), and every late answer sent the next renewal at once: 13 calls for a 10 s handler.
        var (stats, queue, source, _) = RunOne(TimeSpan.FromMilliseconds(700));

        stats.LeasesLost.Should().Be(0, $"renewals sent at (s): {string.Join(", ", source.SentAt)}");
        queue.GetStatistics().Completed.Should().Be(1);
        var lockDurationsHeld = 10.0 / 2.0; // a 10 s handler on a 2 s lock
        (source.SentAt.Count / lockDurationsHeld).Should().BeLessThanOrEqualTo(2.0, $"renewals sent at (s): {string.Join(", ", source.SentAt)}");
    }

    [Fact]
    public void AnswersInTime_NoRenewalIsHedged()
    {
        var (stats, queue, source, logger) = RunOne(TimeSpan.FromMilliseconds(100));

        stats.LeasesLost.Should().Be(0);
        queue.GetStatistics().Completed.Should().Be(1);
        logger.Entries.Should().NotContain(e => e.EventId.Id == HedgedEvent);
        source.MaxInFlight.Should().Be(1);
        source.SentAt.Count.Should().Be((int)stats.Renewals, "every renewal sent was answered and counted once");
    }

    [Fact]
    public void StopWhileAnswersWait_WaitsUntilTheLockTheUnansweredRenewalsMayHaveMoved_AndLeavesNothingLocked()
    {
        // Answers 6 s late on a 2 s lock: at the stop (5 s) the known expiry is the first lock's (2 s), long past, but
        // the renewals sent since reached the broker and hold the lock until about 6 s. The abandon at the stop is never
        // answered, so the stop waits out the lock: the one the broker may hold, not the one last answered.
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(2) });
        queue.Send(new byte[] { 1 });
        var source = new LateAnswers(queue, clock, TimeSpan.FromSeconds(6), silentSettlements: true);
        InMemoryQueueStatistics? atReturn = null;
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                source,
                (context, token) => Task.Delay(TimeSpan.FromSeconds(30), context.TimeProvider, token),
                scheduler,
                new MessagePumpOptions { ShutdownTimeout = TimeSpan.Zero });
            await pump.StartAsync();
            await Task.Delay(TimeSpan.FromSeconds(5), clock);
            await pump.StopAsync();
            atReturn = queue.GetStatistics();
            stats = pump.GetStatistics();
        });

        atReturn!.InFlight.Should().Be(0, $"nothing is locked when StopAsync returns; renewals sent at (s): {string.Join(", ", source.SentAt)}");
        stats!.UnsettledAtStop.Should().Be(1, "the abandon was never answered");
        stats.InFlight.Should().Be(0);
    }

    private static (MessagePumpStatistics Stats, InMemoryQueue Queue, LateAnswers Source, ListLogger Logger) RunOne(TimeSpan answerDelay)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(2) });
        queue.Send(new byte[] { 1 });
        var source = new LateAnswers(queue, clock, answerDelay);
        var logger = new ListLogger();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(source, (context, token) => Task.Delay(TimeSpan.FromSeconds(10), context.TimeProvider, token), scheduler, logger: logger);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1 || queue.GetStatistics().LeasesLost > 0, clock, TimeSpan.FromMinutes(5));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        return (stats!, queue, source, logger);
    }

    /// <summary>
    /// A source whose renewals reach the broker at once and answer <paramref name="answerDelay"/> later; its messages
    /// learn the new expiry from the answer (the latest expiry wins), as a Service Bus message does.
    /// </summary>
    private sealed class LateAnswers(InMemoryQueue inner, TimeProvider clock, TimeSpan answerDelay, bool silentSettlements = false) : IMessageSource
    {
        private int _inFlight;

        public List<double> SentAt { get; } = [];

        public int MaxInFlight { get; private set; }

        public TimeSpan? LockDuration => inner.LockDuration;

        public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            await inner.ReceiveAsync(cancellationToken) is { } message ? new Message(message, this) : null;

        private sealed class Message(ILeasedMessage inner, LateAnswers source) : ILeasedMessage
        {
            private DateTimeOffset _lockedUntil = inner.LockedUntil;

            public string MessageId => inner.MessageId;

            public ReadOnlyMemory<byte> Body => inner.Body;

            public int DeliveryCount => inner.DeliveryCount;

            public DateTimeOffset LockedUntil => _lockedUntil;

            public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
            {
                source.SentAt.Add(source.Clock.GetUtcNow().ToUnixTimeMilliseconds() / 1000.0);
                source.MaxInFlight = Math.Max(source.MaxInFlight, ++source._inFlight);
                try
                {
                    var lockedUntil = await inner.RenewLockAsync(cancellationToken);
                    await Task.Delay(source.AnswerDelay, source.Clock, cancellationToken);
                    _lockedUntil = lockedUntil > _lockedUntil ? lockedUntil : _lockedUntil;
                    return lockedUntil;
                }
                finally
                {
                    source._inFlight--;
                }
            }

            public Task CompleteAsync(CancellationToken cancellationToken = default) => source.Settle(() => inner.CompleteAsync(cancellationToken), cancellationToken);

            public Task AbandonAsync(CancellationToken cancellationToken = default) => source.Settle(() => inner.AbandonAsync(cancellationToken), cancellationToken);

            public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => source.Settle(() => inner.DeadLetterAsync(reason, cancellationToken), cancellationToken);
        }

        /// <summary>A settle call: passed on, or, with silent settlements, never sent nor answered (until its token is canceled).</summary>
        private Task Settle(Func<Task> call, CancellationToken cancellationToken) =>
            silentSettlements ? Task.Delay(Timeout.InfiniteTimeSpan, clock, cancellationToken) : call();

        private TimeProvider Clock => clock;

        private TimeSpan AnswerDelay => answerDelay;
    }
}
