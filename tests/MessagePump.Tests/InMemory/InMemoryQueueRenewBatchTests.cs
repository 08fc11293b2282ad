namespace PriorityAsync.MessagePump.Tests.InMemory;

/// <summary>
/// The in-memory broker's native batch renewal: one call (one latency) for the whole batch, each lease renewed by its
/// own lock token, a lost lease answered for that message alone, and an injected fault failing the whole call.
/// Virtual time.
/// </summary>
public class InMemoryQueueRenewBatchTests
{
    private static readonly TimeSpan Lock = TimeSpan.FromSeconds(30);
    private readonly VirtualTimeProvider _clock = new();

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(20)]
    public async Task RenewBatch_IsOneCall_AnsweredAfterOneLatency_AndRenewsEveryLeaseByItsOwnToken(int latencyMs)
    {
        var latency = TimeSpan.FromMilliseconds(latencyMs);
        var queue = CreateQueue(new InMemoryQueueOptions { LockDuration = Lock, Latency = latency });
        var messages = await ReceiveAsync(queue, 3, latency);
        _clock.Advance(TimeSpan.FromSeconds(10));
        var sentAt = _clock.GetUtcNow();

        var batch = queue.RenewBatchAsync(messages);
        if (latencyMs > 0)
        {
            batch.IsCompleted.Should().BeFalse("the broker answers after its latency");
            _clock.Advance(latency);
        }

        var outcomes = await batch;

        outcomes.Should().HaveCount(3).And.OnlyContain(o => o.IsRenewed && o.LockedUntil == sentAt + latency + Lock);
        messages.Should().OnlyContain(m => m.LockedUntil == sentAt + latency + Lock, "each message's LockedUntil is updated as by its own renewal");
        queue.GetStatistics().Should().BeEquivalentTo(new { Renewals = 3, RenewCalls = 1, LeaseLostErrors = 0, InFlight = 3 });
        ((IMessageSource)queue).RenewsBatchesNatively.Should().BeTrue();
    }

    [Fact]
    public async Task RenewBatch_WithOneLockExpired_AndOneSettled_RenewsTheOthers_AndAnswersLeaseLostForThoseAlone()
    {
        var queue = CreateQueue();
        queue.Send(Body(), "early");
        var early = (InMemoryMessage)(await queue.ReceiveAsync())!;
        _clock.Advance(TimeSpan.FromSeconds(20));
        var rest = await ReceiveAsync(queue, 2, TimeSpan.Zero);
        await rest[1].CompleteAsync();
        _clock.Advance(TimeSpan.FromSeconds(15)); // early's lock ended 5 s ago

        var outcomes = await queue.RenewBatchAsync([early, rest[0], rest[1]]);

        outcomes[0].Failure.Should().BeOfType<LeaseLostException>().Which.Message.Should().Be(
            $"Cannot renew on InMemoryQueue 'q': the lock {early.LockToken} expired or the message was already settled.");
        outcomes[1].Should().Be(LeaseRenewal.Renewed(_clock.GetUtcNow() + Lock));
        outcomes[2].Failure.Should().BeOfType<LeaseLostException>();
        queue.GetStatistics().Should().BeEquivalentTo(new { Renewals = 1, RenewCalls = 1, LeaseLostErrors = 2, LeasesLost = 1, Completed = 1, InFlight = 1 });
    }

    [Fact]
    public async Task RenewBatch_WithAnInjectedFault_FailsTheWholeCall_RenewingNothing()
    {
        var queue = CreateQueue(new InMemoryQueueOptions { LockDuration = Lock, RenewFailureRate = 1 });
        var messages = await ReceiveAsync(queue, 2, TimeSpan.Zero);
        var before = messages.Select(m => m.LockedUntil).ToList();
        _clock.Advance(TimeSpan.FromSeconds(5));

        await FluentActions.Awaiting(() => queue.RenewBatchAsync(messages)).Should().ThrowAsync<TransientTransportException>()
            .WithMessage("Injected transient failure of renew on InMemoryQueue 'q'.");

        messages.Select(m => m.LockedUntil).Should().Equal(before);
        queue.GetStatistics().Should().BeEquivalentTo(new { Renewals = 0, RenewCalls = 1, TransientFaults = 1 });
    }

    [Fact]
    public async Task RenewBatch_RejectsAnInvalidBatch_NamingMessages_AndAMessageOfAnotherQueue()
    {
        var queue = CreateQueue();
        var other = new InMemoryTransport(_clock).CreateQueue("other", new InMemoryQueueOptions { LockDuration = Lock });
        other.Send(Body(), "theirs");
        var theirs = (await other.ReceiveAsync())!;

        await FluentActions.Awaiting(() => queue.RenewBatchAsync(null!)).Should().ThrowAsync<ArgumentNullException>().WithParameterName("messages");
        await FluentActions.Awaiting(() => queue.RenewBatchAsync([])).Should().ThrowAsync<ArgumentException>().WithParameterName("messages")
            .WithMessage("A batch to renew must hold at least one message.*");
        (await FluentActions.Awaiting(() => queue.RenewBatchAsync([theirs])).Should().ThrowAsync<ArgumentException>().WithParameterName("messages"))
            .Which.Message.Should().StartWith($"The message at index 0 ({theirs}) was not received from InMemoryQueue 'q'.");
        queue.GetStatistics().RenewCalls.Should().Be(0);
    }

    [Fact]
    public async Task RenewBatch_Canceled_BeforeTheLatency_RenewsNothing()
    {
        var queue = CreateQueue(new InMemoryQueueOptions { LockDuration = Lock, Latency = TimeSpan.FromMilliseconds(20) });
        var messages = await ReceiveAsync(queue, 2, TimeSpan.FromMilliseconds(20));
        using var cancellation = new CancellationTokenSource();

        var batch = queue.RenewBatchAsync(messages, cancellation.Token);
        await cancellation.CancelAsync();
        _clock.Advance(TimeSpan.FromMilliseconds(20));

        await FluentActions.Awaiting(() => batch).Should().ThrowAsync<OperationCanceledException>();
        queue.GetStatistics().Should().BeEquivalentTo(new { Renewals = 0, RenewCalls = 0 });
    }

    private async Task<InMemoryMessage[]> ReceiveAsync(InMemoryQueue queue, int count, TimeSpan latency)
    {
        for (var i = 0; i < count; i++)
        {
            queue.Send(Body(), $"m{i}");
        }

        var receive = queue.ReceiveBatchAsync(count);
        _clock.Advance(latency);
        return [.. (await receive).Cast<InMemoryMessage>()];
    }

    private static byte[] Body() => [1, 2, 3];

    private InMemoryQueue CreateQueue(InMemoryQueueOptions? options = null) =>
        new InMemoryTransport(_clock).CreateQueue("q", options ?? new InMemoryQueueOptions { LockDuration = Lock });
}
