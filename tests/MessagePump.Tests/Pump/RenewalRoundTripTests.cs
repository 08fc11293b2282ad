namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// Renewal timing follows the renew round trips the pump observes. A 2 s lock whose renewals first take 100 ms, then
/// 1.8 s (0.9 s to reach the broker): by the half-lock rule alone (renew at half the remaining lock) the second slow
/// renewal reaches the broker after the lock ended; with the round trip in the rule every renewal arrives in time.
/// Virtual time, one thread.
/// </summary>
public class RenewalRoundTripTests
{
    [Fact]
    public void GrowingRoundTrip_RenewalsMoveEarlier_AndTheLeaseIsKept()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(2) });
        queue.Send(new byte[] { 1 });
        var source = new SlowRenewals(queue, clock, renewal => renewal < 2 ? TimeSpan.FromMilliseconds(100) : TimeSpan.FromMilliseconds(1800));
        MessagePumpStatistics? stats = null;
        VirtualRun.Run(clock, async scheduler =>
        {
            var pump = new PriorityMessagePump(source, (context, token) => Task.Delay(TimeSpan.FromSeconds(20), context.TimeProvider, token), scheduler);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1 || queue.GetStatistics().LeasesLost > 0, clock, TimeSpan.FromMinutes(5));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        stats!.LeasesLost.Should().Be(0, $"slack at each renewal sent: {string.Join(", ", source.SlackAtSend.Select(s => s.TotalMilliseconds))} ms");
        queue.GetStatistics().Completed.Should().Be(1);
        var afterSlowAnswer = source.Sends.Where(send => send.At >= source.FirstSlowAnswerAt).Select(send => send.Slack).ToList();
        afterSlowAnswer.Should().HaveCountGreaterThan(3);
        afterSlowAnswer.Should().OnlyContain(
            slack => slack > TimeSpan.FromMilliseconds(900),
            "once the slow round trips are observed, each renewal (hedged or not) is sent with more lock left than its way to the broker takes");
    }

    /// <summary>A source whose renew calls take <c>roundTrip(n)</c> for the n-th renewal: half on the way there, half back.</summary>
    private sealed class SlowRenewals(InMemoryQueue inner, TimeProvider clock, Func<int, TimeSpan> roundTrip) : IMessageSource
    {
        private int _renewals;

        public List<TimeSpan> SlackAtSend { get; } = [];

        public List<(DateTimeOffset At, TimeSpan Slack)> Sends { get; } = [];

        public DateTimeOffset FirstSlowAnswerAt { get; private set; } = DateTimeOffset.MaxValue;

        public TimeSpan? LockDuration => inner.LockDuration;

        public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
            await inner.ReceiveAsync(cancellationToken) is { } message ? new Message(message, this) : null;

        private sealed class Message(ILeasedMessage inner, SlowRenewals source) : ILeasedMessage
        {
            public string MessageId => inner.MessageId;

            public ReadOnlyMemory<byte> Body => inner.Body;

            public int DeliveryCount => inner.DeliveryCount;

            public DateTimeOffset LockedUntil => inner.LockedUntil;

            public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
            {
                var now = source.Clock.GetUtcNow();
                source.SlackAtSend.Add(inner.LockedUntil - now);
                source.Sends.Add((now, inner.LockedUntil - now));
                var half = TimeSpan.FromTicks(source.RoundTrip(source._renewals++).Ticks / 2);
                await Task.Delay(half, source.Clock, cancellationToken);
                var lockedUntil = await inner.RenewLockAsync(cancellationToken);
                await Task.Delay(half, source.Clock, cancellationToken);
                if (half > TimeSpan.FromMilliseconds(500) && source.FirstSlowAnswerAt == DateTimeOffset.MaxValue)
                {
                    source.FirstSlowAnswerAt = source.Clock.GetUtcNow();
                }

                return lockedUntil;
            }

            public Task CompleteAsync(CancellationToken cancellationToken = default) => inner.CompleteAsync(cancellationToken);

            public Task AbandonAsync(CancellationToken cancellationToken = default) => inner.AbandonAsync(cancellationToken);

            public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => inner.DeadLetterAsync(reason, cancellationToken);
        }

        private TimeProvider Clock => clock;

        private TimeSpan RoundTrip(int renewal) => roundTrip(renewal);
    }
}
