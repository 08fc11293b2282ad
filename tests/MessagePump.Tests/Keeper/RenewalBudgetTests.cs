using PriorityAsync.MessagePump.Tests.Pump;

namespace PriorityAsync.MessagePump.Tests.Keeper;

/// <summary>
/// The renewal budget: a lease kept for 10 lock durations with the default rule is renewed at most twice
/// per lock duration, and a renewal buffer the user set is honoured as set (3 s of a 5 s lock: every 2 s, 2.5 calls per
/// lock duration); an answer later than the observed round trip and than half the lock makes the
/// keeper send one hedged renewal, answers on time none; no lock is lost. One thread, virtual time; the source's
/// renewals reach the broker at once and answer after a delay chosen per call.
/// </summary>
public class RenewalBudgetTests
{
    private const int HedgedEvent = 35;
    private const int BrokenRenewalEvent = 34;
    private const int SlowRoundTripsEvent = 36;
    private static readonly TimeSpan Lock = TimeSpan.FromSeconds(5);
    private static readonly TimeSpan Held = Lock * 10;
    private static readonly TimeSpan OnTime = TimeSpan.FromMilliseconds(100);

    [Fact]
    public void ALeaseKeptForTenLockDurations_IsRenewedAtMostTwicePerLockDuration()
    {
        var run = KeepOne(null, _ => OnTime);

        run.Stats.LeasesLost.Should().Be(0);
        run.LockLeftAtEnd.Should().BePositive("the lease was still locked when the user settled it");
        run.Source.SentAt.Count.Should().BeLessThanOrEqualTo(20, $"at most 2 renew calls per lock duration over 10 lock durations; sent at (s): {run.Source}");
        run.Source.SentAt[0].Should().BeGreaterThanOrEqualTo(Lock.TotalSeconds / 2, "a renewal right after receive is wasted: the first goes at half the lock");
        run.Logger.Entries.Should().NotContain(e => e.EventId.Id == HedgedEvent, "every answer came back on time");
    }

    [Fact]
    public void A_renewal_buffer_the_user_set_is_honoured_as_set()
    {
        var run = KeepOne(TimeSpan.FromSeconds(3), _ => OnTime);

        run.Stats.LeasesLost.Should().Be(0);
        run.Source.SentAt.Count.Should().BeInRange(24, 26, $"3 s of a 5 s lock renews every 2 s: 50 s / 2 s; sent at (s): {run.Source}");
        run.Source.SentAt[0].Should().BeApproximately(2.0, 0.2, "the first renewal goes when the buffer is left");
    }

    [Fact]
    public void AnAnswerLaterThanTheObservedRoundTrip_MakesTheKeeperSendOneHedge()
    {
        // The third renewal answers after 3 s, later than the 100 ms round trips seen before it and than half the lock:
        // the renewal due meanwhile goes out while it is unanswered (one hedge); every other answer is on time.
        var run = KeepOne(null, call => call == 3 ? TimeSpan.FromSeconds(3) : OnTime);

        run.Stats.LeasesLost.Should().Be(0);
        run.LockLeftAtEnd.Should().BePositive();
        run.Logger.Entries.Count(e => e.EventId.Id == HedgedEvent).Should().Be(1, $"one late answer, one hedge; sent at (s): {run.Source}");
        run.Source.MaxInFlight.Should().Be(2);
        run.Source.SentAt.Count.Should().BeLessThanOrEqualTo(20, $"the hedge stays within the budget; sent at (s): {run.Source}");
    }

    [Fact]
    public void RoundTripsOfFortyPercentOfTheLock_RenewEarlierNotMoreOften_AndAreReported()
    {
        // Every answer takes 2 s on a 5 s lock: three round trips (6 s) are more than the lock, so the round-trip floor
        // stops at half the lock. Renewals go every 2.5 s (two per lock duration), no hedge goes out (an answer is never
        // later than the round trips observed), nothing is lost, and event 36 says the lock is too short for its round
        // trips, once.
        var run = KeepOne(null, _ => TimeSpan.FromSeconds(2));

        run.Stats.LeasesLost.Should().Be(0, $"sent at (s): {run.Source}");
        run.LockLeftAtEnd.Should().BePositive();
        run.Source.SentAt.Count.Should().BeLessThanOrEqualTo(20, $"at most 2 renew calls per lock duration over 10 lock durations; sent at (s): {run.Source}");
        run.Source.MaxInFlight.Should().Be(1);
        run.Logger.Entries.Should().NotContain(e => e.EventId.Id == HedgedEvent);
        run.Logger.Entries.Count(e => e.EventId.Id == SlowRoundTripsEvent).Should().Be(1, $"log:{Environment.NewLine}{run.Logger}");
    }

    [Fact]
    public void TheUsersOwnRenewalAnsweredWhileTheKeepersIsOut_IsNoBrokenContract_AndSendsNoExtraRenewal()
    {
        // The keeper's first renewal (2.5 s) answers after 2 s; the handler renews the lock itself at 3 s
        // (a processor's args.RenewMessageLockAsync), answered at once with a later expiry. The keeper's answer, older
        // news by then, must not be taken for an answer about another message (event 34) nor renewed again alone.
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(new byte[] { 1 }, "m1");
        var source = new DelayedAnswers(queue, clock, call => call == 1 ? TimeSpan.FromSeconds(2) : OnTime);
        var logger = new ListLogger();
        LeaseKeeperStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, logger: logger);
            var message = (await source.ReceiveAsync())!;
            using var handle = keeper.Keep(message, source);
            await Task.Delay(TimeSpan.FromSeconds(3), clock);
            await message.RenewLockAsync(); // the user's own renewal, beside the keeper's
            await Task.Delay(TimeSpan.FromSeconds(2), clock); // past the keeper's answer at 4.5 s
            stats = keeper.GetStatistics();
        });

        logger.Entries.Should().NotContain(e => e.EventId.Id == BrokenRenewalEvent, $"log:{Environment.NewLine}{logger}");
        source.SentAt.Should().Equal([2.5, 3.0], "the keeper's renewal and the user's; none renewed again alone");
        stats!.LeasesLost.Should().Be(0);
    }

    private static Run KeepOne(TimeSpan? buffer, Func<int, TimeSpan> answerDelay)
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(new byte[] { 1 }, "m1");
        var source = new DelayedAnswers(queue, clock, answerDelay);
        var logger = new ListLogger();
        LeaseKeeperStatistics? stats = null;
        var lockLeft = TimeSpan.Zero;
        VirtualRun.Run(clock, async scheduler =>
        {
            await using var keeper = new LeaseKeeper(scheduler, new LeaseKeeperOptions { LockRenewalBuffer = buffer }, logger);
            var message = (await source.ReceiveAsync())!;
            var handle = keeper.Keep(message, source);
            await Task.Delay(Held, clock);
            lockLeft = handle.LockedUntil - clock.GetUtcNow();
            await handle.CompleteAsync();
            stats = keeper.GetStatistics();
        });

        return new Run(stats!, source, logger, lockLeft);
    }

    private sealed record Run(LeaseKeeperStatistics Stats, DelayedAnswers Source, ListLogger Logger, TimeSpan LockLeftAtEnd);

    /// <summary>
    /// A source that knows its lock duration, whose renewals reach the broker at once and answer after
    /// <c>answerDelay(n)</c> for the n-th call (from 1); its messages learn the new expiry from the answer (the latest
    /// wins), as a Service Bus message does.
    /// </summary>
    private sealed class DelayedAnswers(InMemoryQueue inner, TimeProvider clock, Func<int, TimeSpan> answerDelay) : IMessageSource
    {
        private readonly DateTimeOffset _start = clock.GetUtcNow();
        private int _inFlight;

        public List<double> SentAt { get; } = [];

        public int MaxInFlight { get; private set; }

        public TimeSpan? LockDuration => inner.LockDuration;

        public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            await inner.ReceiveAsync(cancellationToken) is { } message ? new Message(message, this) : null;

        public override string ToString() => string.Join(", ", SentAt.Select(s => s.ToString("0.###", System.Globalization.CultureInfo.InvariantCulture)));

        private sealed class Message(ILeasedMessage inner, DelayedAnswers source) : ILeasedMessage
        {
            private DateTimeOffset _lockedUntil = inner.LockedUntil;

            public string MessageId => inner.MessageId;

            public ReadOnlyMemory<byte> Body => inner.Body;

            public int DeliveryCount => inner.DeliveryCount;

            public DateTimeOffset LockedUntil => _lockedUntil;

            public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
            {
                source.SentAt.Add((source.Clock.GetUtcNow() - source._start).TotalSeconds);
                var call = source.SentAt.Count;
                source.MaxInFlight = Math.Max(source.MaxInFlight, ++source._inFlight);
                try
                {
                    var lockedUntil = await inner.RenewLockAsync(cancellationToken);
                    await Task.Delay(source.AnswerDelay(call), source.Clock, cancellationToken);
                    _lockedUntil = lockedUntil > _lockedUntil ? lockedUntil : _lockedUntil;
                    return lockedUntil;
                }
                finally
                {
                    source._inFlight--;
                }
            }

            public Task CompleteAsync(CancellationToken cancellationToken = default) => inner.CompleteAsync(cancellationToken);

            public Task AbandonAsync(CancellationToken cancellationToken = default) => inner.AbandonAsync(cancellationToken);

            public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => inner.DeadLetterAsync(reason, cancellationToken);
        }

        private TimeProvider Clock => clock;

        private TimeSpan AnswerDelay(int call) => answerDelay(call);
    }
}
