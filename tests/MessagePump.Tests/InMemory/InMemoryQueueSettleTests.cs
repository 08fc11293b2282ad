namespace PriorityAsync.MessagePump.Tests.InMemory;

/// <summary>
/// What the in-memory broker answers when a lock is gone, a batch is partly lost or a fault is injected: the exception
/// a consumer's log shows (naming the operation, the queue and the lock) and the statistics a test or a simulation reads.
/// </summary>
public class InMemoryQueueSettleTests
{
    private static readonly TimeSpan Lock = TimeSpan.FromSeconds(30);
    private readonly VirtualTimeProvider _clock = new();

    public static TheoryData<string> Operations => ["renew", "complete", "abandon", "dead-letter"];

    [Theory]
    [MemberData(nameof(Operations))]
    public async Task AnyOperation_OnAnExpiredLock_ThrowsLeaseLost_NamingTheOperationQueueAndLock(string operation)
    {
        var queue = CreateQueue();
        queue.Send(Body(), "m1");
        var message = (InMemoryMessage)(await queue.ReceiveAsync())!;
        _clock.Advance(Lock);

        var call = () => Settle(message, operation);

        (await call.Should().ThrowAsync<LeaseLostException>()).WithMessage(
            $"Cannot {operation} on InMemoryQueue 'q': the lock {message.LockToken} expired or the message was already settled.");
        queue.GetStatistics().Should().BeEquivalentTo(new { LeasesLost = 1, LeaseLostErrors = 1, Completed = 0, Abandoned = 0, DeadLettered = 0, Renewals = 0 });
    }

    [Theory]
    [MemberData(nameof(Operations))]
    public async Task AnyOperation_AfterTheMessageWasSettled_ThrowsLeaseLost(string operation)
    {
        var queue = CreateQueue();
        queue.Send(Body(), "m1");
        var message = (InMemoryMessage)(await queue.ReceiveAsync())!;
        await message.CompleteAsync();

        var call = () => Settle(message, operation);

        (await call.Should().ThrowAsync<LeaseLostException>()).WithMessage($"Cannot {operation} on InMemoryQueue 'q': *already settled.");
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 1, LeaseLostErrors = 1, LeasesLost = 0, InFlight = 0, Available = 0 });
    }

    [Fact]
    public async Task CompleteBatch_WithOneLockExpired_CompletesTheOthers_AndAnswersLeaseLostForIt()
    {
        var queue = CreateQueue();
        queue.Send(Body(), "early");
        queue.Send(Body(), "late");
        var early = (InMemoryMessage)(await queue.ReceiveAsync())!;
        _clock.Advance(TimeSpan.FromSeconds(20));
        var late = (InMemoryMessage)(await queue.ReceiveAsync())!;
        _clock.Advance(TimeSpan.FromSeconds(15)); // early's lock ended 5 s ago; nothing has looked at it since

        var outcomes = await queue.CompleteBatchAsync([early, late]);

        outcomes.Should().HaveCount(2);
        outcomes[0].Should().BeOfType<LeaseLostException>().Which.Message.Should().Be(
            $"Cannot complete on InMemoryQueue 'q': the lock {early.LockToken} expired or the message was already settled.");
        outcomes[1].Should().BeNull();
        var stats = queue.GetStatistics();
        stats.Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 1, LeaseLostErrors = 1, InFlight = 0, Available = 1 });
        stats.ShouldBeConsistent();
    }

    [Fact]
    public async Task CompleteBatch_WithAMessageOfAnotherQueue_IsRejected_NamingItsIndex()
    {
        var queue = CreateQueue();
        var other = new InMemoryTransport(_clock).CreateQueue("other", new InMemoryQueueOptions { LockDuration = Lock });
        queue.Send(Body(), "mine");
        other.Send(Body(), "theirs");
        var mine = (await queue.ReceiveAsync())!;
        var theirs = (await other.ReceiveAsync())!;

        var call = () => queue.CompleteBatchAsync([mine, theirs]);

        (await call.Should().ThrowAsync<ArgumentException>())
            .WithParameterName("messages")
            .WithMessage($"The message at index 1 ({theirs}) was not received from InMemoryQueue 'q'.*");
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 0, InFlight = 1 });
    }

    [Fact]
    public async Task InjectedFaults_FailTheWholeCall_NamingTheOperation_AndChangeNothing()
    {
        var queue = CreateQueue(new InMemoryQueueOptions { LockDuration = Lock, RenewFailureRate = 1, CompleteFailureRate = 1 });
        queue.Send(Body(), "m1");
        var message = (InMemoryMessage)(await queue.ReceiveAsync())!;

        var renew = () => message.RenewLockAsync();
        var complete = () => message.CompleteAsync();
        var completeBatch = () => queue.CompleteBatchAsync([message]);

        (await renew.Should().ThrowAsync<TransientTransportException>()).WithMessage("Injected transient failure of renew on InMemoryQueue 'q'.");
        (await complete.Should().ThrowAsync<TransientTransportException>()).WithMessage("Injected transient failure of complete on InMemoryQueue 'q'.");
        (await completeBatch.Should().ThrowAsync<TransientTransportException>()).WithMessage("Injected transient failure of complete on InMemoryQueue 'q'.");
        message.LockedUntil.Should().Be(_clock.GetUtcNow() + Lock, "the failed renewal did not extend the lock");
        queue.GetStatistics().Should().BeEquivalentTo(new { TransientFaults = 3, Renewals = 0, Completed = 0, InFlight = 1, LeaseLostErrors = 0 });
    }

    [Fact]
    public void Send_AHeaderWithANullValue_IsRejected_NamingTheHeader()
    {
        var queue = CreateQueue();

        var send = () => queue.Send(Body(), "m1", new Dictionary<string, string> { ["traceparent"] = null! });

        send.Should().Throw<ArgumentException>().WithParameterName("headers").WithMessage("Header 'traceparent' has a null value.*");
        queue.GetStatistics().Should().BeEquivalentTo(new { Sent = 0, Available = 0 });
    }

    private static Task Settle(InMemoryMessage message, string operation) => operation switch
    {
        "renew" => message.RenewLockAsync(),
        "complete" => message.CompleteAsync(),
        "abandon" => message.AbandonAsync(),
        _ => message.DeadLetterAsync("poison"),
    };

    private static byte[] Body() => [1, 2, 3];

    private InMemoryQueue CreateQueue(InMemoryQueueOptions? options = null) =>
        new InMemoryTransport(_clock).CreateQueue("q", options ?? new InMemoryQueueOptions { LockDuration = Lock });
}
