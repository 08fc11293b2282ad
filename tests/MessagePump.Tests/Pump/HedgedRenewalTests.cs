namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// Renewals while answers wait: a 2 s lock whose renew requests reach the broker at once but whose answers take
/// <c>answerDelay</c> to come back (the Service Bus SDK's answer crossing a starved thread pool). One renewal is under
/// way per lease, and a second (a hedge) goes out only when the answer is later than the round trips observed; answers
/// within the lock keep the budget of two renew calls per lock duration. Before any round trip was answered, answers
/// later than the lock cannot be told from renewals that never arrived: the lease is lost at the instant its known
/// expiry passes unrenewed, and its handler is canceled then. Once request legs were observed, a renewal sent early
/// enough to have reached the broker is waited for: its answer decides. Virtual time, one thread.
/// </summary>
public class HedgedRenewalTests
{
    private const int HedgedEvent = 35;

    [Fact]
    public void AnswersSlowerThanTheLock_TheLeaseIsLostAtItsKnownExpiry_AndItsHandlerCanceled()
    {
        var (stats, queue, source, logger) = RunOne(TimeSpan.FromMilliseconds(2200));

        stats.LeasesLost.Should().Be(1, $"no renewal was answered before the known expiry; renewals sent at (s): {string.Join(", ", source.SentAt)}; log:{Environment.NewLine}{logger}");
        stats.Completed.Should().Be(0, "a lost lease's message is not completed");
        source.CanceledAt.Should().ContainSingle().Which.Should().Be(2.0, "the handler is canceled at the known expiry (2 s), not when an answer comes");
        source.MaxInFlight.Should().BeLessThanOrEqualTo(LeaseKeeper.MaxRenewalsInFlight);
        source.SentAt.Should().HaveCountLessThanOrEqualTo(2, "one renewal, and at most one hedge, before the lock ran out");
        queue.GetStatistics().Completed.Should().Be(0);
    }

    [Fact]
    public void AnswersLateButWithinTheLock_AtMostTwoRenewCallsPerLockDuration()
    {
        // 700 ms answers on a 2 s lock whose renewals reach the broker at once: the lock the broker holds is the one each
        // renewal set when it was sent, so the next renewal is due by the rule from that expiry, not at once because the
        // answer took long, and no hedge goes out once 700 ms answers are the round trips observed.
        var (stats, queue, source, _) = RunOne(TimeSpan.FromMilliseconds(700));

        stats.LeasesLost.Should().Be(0, $"renewals sent at (s): {string.Join(", ", source.SentAt)}");
        queue.GetStatistics().Completed.Should().Be(1);
        var lockDurationsHeld = 10.0 / 2.0; // a 10 s handler on a 2 s lock
        (source.SentAt.Count / lockDurationsHeld).Should().BeLessThanOrEqualTo(2.0, $"renewals sent at (s): {string.Join(", ", source.SentAt)}");
        source.MaxInFlight.Should().Be(1);
    }

    [Fact]
    public void OneAnswerLaterThanTheRoundTripsObserved_SendsOneHedge_ThatKeepsTheLease()
    {
        // Answers in 100 ms, but the fourth renewal is answered only after 1.5 s, past its lock's known expiry: the hedge,
        // due at twice the worst round trip or half the lock left at the send, whichever is later, reaches the broker
        // and is answered in time.
        var (stats, queue, source, logger) = RunOne(TimeSpan.FromMilliseconds(100), lateIndex: 3, lateAnswer: TimeSpan.FromMilliseconds(1500));

        stats.LeasesLost.Should().Be(0, $"renewals sent at (s): {string.Join(", ", source.SentAt)}; log:{Environment.NewLine}{logger}");
        queue.GetStatistics().Completed.Should().Be(1);
        logger.Entries.Should().ContainSingle(e => e.EventId.Id == HedgedEvent);
        var hedgeAfter = source.SentAt[4] - source.SentAt[3];
        hedgeAfter.Should().BeInRange(0.2, 0.5, $"the hedge goes out once the answer is later than twice the round trips observed, at half the lock left; sent at (s): {string.Join(", ", source.SentAt)}");
        source.MaxInFlight.Should().Be(2);
    }

    [Fact]
    public void AnswersThatTurnLate_WhileRequestsStillReachTheBrokerAtOnce_AreWaitedFor_AndTheLeaseIsKept()
    {
        // Answers in 800 ms, then every answer 1.5 s late on a 2 s lock (a pool starved further after the first renewals):
        // each renewal sent with 1 s of lock left moves the broker's lock at once, and only its answer comes after the
        // known expiry, within twice the worst round trip observed (late, not overdue). The request legs observed (none)
        // say it arrived in time, so the lease is not lost at the known expiry: the answer decides, and it says renewed.
        var (stats, queue, source, logger) = RunOne(TimeSpan.FromMilliseconds(800), lateAnswer: TimeSpan.FromMilliseconds(1500), lateFromIndex: 3);

        stats.LeasesLost.Should().Be(0, $"renewals sent at (s): {string.Join(", ", source.SentAt)}; log:{Environment.NewLine}{logger}");
        source.CanceledAt.Should().BeEmpty("the handler of a lease whose lock the broker holds is not canceled");
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 0 }, "the broker never saw the lock run out");
        source.MaxInFlight.Should().BeLessThanOrEqualTo(LeaseKeeper.MaxRenewalsInFlight);
    }

    [Fact]
    public void OneSlowRequestLeg_DoesNotMarkLostTheLaterRenewalsThatArrivedInTime()
    {
        // One keeper, two locks. The 10 s lock's first renewal (sent with 5 s left) takes 3 s to reach the broker, as the
        // first renewal on a link the client opens with it does, and arrives in time. Then a 2 s lock whose fourth
        // renewal reaches the broker at once but is answered 1.5 s late, past its known expiry: the typical leg observed
        // (none) says it arrived, so the answer decides, and it says renewed. Judged by the worst leg (3 s), it would be
        // lost at its known expiry though the broker holds it.
        var clock = new VirtualTimeProvider();
        var transport = new InMemoryTransport(clock);
        var longQueue = transport.CreateQueue("long", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(10) });
        var shortQueue = transport.CreateQueue("short", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(2) });
        longQueue.Send(new byte[] { 1 }, "long");
        shortQueue.Send(new byte[] { 1 }, "short");
        var slowLeg = new LateAnswers(longQueue, clock, TimeSpan.FromMilliseconds(100)) { SlowRequestIndex = 0, SlowRequest = TimeSpan.FromSeconds(3) };
        var lateAnswers = new LateAnswers(shortQueue, clock, TimeSpan.FromMilliseconds(100)) { LateFromIndex = 3, LateAnswer = TimeSpan.FromMilliseconds(1500) };
        LeaseKeeperStatistics? stats = null;
        bool? shortLost = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler);
            var longHandle = keeper.Keep((await slowLeg.ReceiveAsync())!, slowLeg);
            await Task.Delay(TimeSpan.FromSeconds(9), clock); // the slow leg has been observed (its answer came at 8.1 s)
            var shortHandle = keeper.Keep((await lateAnswers.ReceiveAsync())!, lateAnswers);
            await Task.Delay(TimeSpan.FromSeconds(5.7), clock); // the fourth renewal (13 s) is answered at 14.5 s, its known expiry 14 s
            shortLost = shortHandle.IsLost;
            stats = keeper.GetStatistics();
            await shortHandle.CompleteAsync();
            await longHandle.CompleteAsync();
        });

        shortLost.Should().BeFalse($"the broker held the lock: its renewal arrived at once; renewals sent at (s): {string.Join(", ", lateAnswers.SentAt)}");
        stats!.LeasesLost.Should().Be(0);
        shortQueue.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 0 }, "the broker never saw the lock run out");
        longQueue.GetStatistics().Completed.Should().Be(1);
    }

    [Fact]
    public void HeldUntil_WhileARenewalThatArrivedInTimeIsUnanswered_IsLaterThanLockedUntil()
    {
        // A 2 s lock whose renewals are answered in 800 ms, and from the fourth on 1.5 s late (within twice the worst round
        // trip observed: late, not overdue): they reach the broker at once, so between the known expiry and the answers,
        // HeldUntil is the keeper's verdict (the latest the newest renewal holds the lock), and the lease is kept.
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("short", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(2) });
        queue.Send(new byte[] { 1 }, "short");
        var source = new LateAnswers(queue, clock, TimeSpan.FromMilliseconds(800)) { LateFromIndex = 3, LateAnswer = TimeSpan.FromMilliseconds(1500) };
        DateTimeOffset now = default, known = default, held = default;
        var lostThen = true;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler);
            var handle = keeper.Keep((await source.ReceiveAsync())!, source);
            await VirtualRun.WaitUntilAsync(() => clock.GetUtcNow() > handle.LockedUntil || handle.IsLost, clock, TimeSpan.FromSeconds(20), TimeSpan.FromMilliseconds(50));
            (now, known, held, lostThen) = (clock.GetUtcNow(), handle.LockedUntil, handle.HeldUntil, handle.IsLost);
            await VirtualRun.WaitUntilAsync(() => handle.LockedUntil > now, clock, TimeSpan.FromSeconds(5), TimeSpan.FromMilliseconds(50));
            await handle.CompleteAsync();
        });

        lostThen.Should().BeFalse($"the renewal reached the broker in time; renewals sent at (s): {string.Join(", ", source.SentAt)}");
        known.Should().BeOnOrBefore(now);
        held.Should().BeAfter(now, "the keeper holds the lock until the latest the unanswered renewal keeps it");
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 0 });
    }

    [Fact]
    public void AnAnswerOverdue_HoldsNothing_TheLeaseIsLostAtItsKnownExpiry()
    {
        // Answers in 100 ms, then none for 5 s from the fourth renewal on, as when the client holds its calls after a
        // throttled answer (the Service Bus SDK waits 10 s after ServiceBusy): unanswered for half the lock (more than
        // twice the worst round trip) the renewal is taken as never sent, so the lease is lost at its known expiry, not
        // when the lock its renewal might have set would end.
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("short", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(2) });
        queue.Send(new byte[] { 1 }, "short");
        var source = new LateAnswers(queue, clock, TimeSpan.FromMilliseconds(100)) { LateFromIndex = 3, LateAnswer = TimeSpan.FromSeconds(5) };
        DateTimeOffset known = default, heldAfter = default, lostAt = default;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler);
            var handle = keeper.Keep((await source.ReceiveAsync())!, source);
            await VirtualRun.WaitUntilAsync(() => handle.IsLost, clock, TimeSpan.FromSeconds(20), TimeSpan.FromMilliseconds(10));
            (lostAt, known, heldAfter) = (clock.GetUtcNow(), handle.LockedUntil, handle.HeldUntil);
        });

        // The fourth renewal, sent at 4 s with 1 s left, is overdue at 5 s (half the lock unanswered): the known expiry.
        lostAt.Should().BeOnOrAfter(known).And.BeOnOrBefore(known + TimeSpan.FromMilliseconds(20), $"the lease is lost at the instant its known expiry passes; renewals sent at (s): {string.Join(", ", source.SentAt)}");
        heldAfter.Should().Be(known, "an overdue renewal holds nothing");
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
    public void StopWhileAnswersWait_LeavesNothingLocked()
    {
        // Answers 6 s late on a 2 s lock: each delivery's lease is lost at its known expiry (the first at 2 s; the
        // message comes back at 3 s, when the lock its renewal set runs out, and the second at 5 s) and its handler
        // canceled, but a renewal sent before the expiry reached the broker and holds the lock a little longer (the
        // second's until 6 s). The stop at 5 s waits that lock out: nothing is locked when StopAsync returns.
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
        stats!.LeasesLost.Should().Be(2, "both deliveries' known expiries passed with their renewal unanswered");
        stats.UnsettledAtStop.Should().Be(0, "a lost message has nothing left to settle");
        stats.InFlight.Should().Be(0);
    }

    private static (MessagePumpStatistics Stats, InMemoryQueue Queue, LateAnswers Source, ListLogger Logger) RunOne(TimeSpan answerDelay, int lateIndex = -1, TimeSpan lateAnswer = default, int lateFromIndex = -1)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(2) });
        queue.Send(new byte[] { 1 });
        var source = new LateAnswers(queue, clock, answerDelay) { LateIndex = lateIndex, LateAnswer = lateAnswer, LateFromIndex = lateFromIndex };
        var logger = new ListLogger();
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(
                source,
                async (context, token) =>
                {
                    using var registration = token.Register(() => source.CanceledAt.Add(source.Seconds()));
                    await Task.Delay(TimeSpan.FromSeconds(10), context.TimeProvider, token);
                },
                scheduler,
                logger: logger);
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

        public List<double> CanceledAt { get; } = [];

        /// <summary>Which renewal (0 for the first) is answered <see cref="LateAnswer"/> late; -1 for none.</summary>
        public int LateIndex { get; init; } = -1;

        public TimeSpan LateAnswer { get; init; }

        /// <summary>From which renewal on every answer is <see cref="LateAnswer"/> late; -1 for none.</summary>
        public int LateFromIndex { get; init; } = -1;

        /// <summary>Which renewal (0 for the first) takes <see cref="SlowRequest"/> to reach the broker; -1 for none.</summary>
        public int SlowRequestIndex { get; init; } = -1;

        public TimeSpan SlowRequest { get; init; }

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
                var index = source.SentAt.Count;
                source.SentAt.Add(source.Seconds());
                source.MaxInFlight = Math.Max(source.MaxInFlight, ++source._inFlight);
                try
                {
                    if (index == source.SlowRequestIndex)
                    {
                        await Task.Delay(source.SlowRequest, source.Clock, cancellationToken);
                    }

                    var lockedUntil = await inner.RenewLockAsync(cancellationToken);
                    var late = index == source.LateIndex || (source.LateFromIndex >= 0 && index >= source.LateFromIndex);
                    await Task.Delay(late ? source.LateAnswer : source.AnswerDelay, source.Clock, cancellationToken);
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

        private readonly DateTimeOffset _start = clock.GetUtcNow();

        private TimeProvider Clock => clock;

        /// <summary>The clock's time in seconds since the source was made (the message is received then).</summary>
        public double Seconds() => (clock.GetUtcNow() - _start).TotalSeconds;

        private TimeSpan AnswerDelay => answerDelay;
    }
}
