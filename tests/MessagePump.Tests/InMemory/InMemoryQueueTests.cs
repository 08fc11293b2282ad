using System.Text;

namespace PriorityAsync.MessagePump.Tests.InMemory;

public class InMemoryQueueTests
{
    private static readonly TimeSpan Lock = TimeSpan.FromSeconds(30);
    private readonly VirtualTimeProvider _clock = new();

    [Fact]
    public async Task Receive_LocksMessage_WithFreshToken_AndHidesIt()
    {
        var queue = CreateQueue();
        queue.Send(Encoding.UTF8.GetBytes("hello"), "m1");

        var message = (InMemoryMessage)(await queue.ReceiveAsync())!;

        message.MessageId.Should().Be("m1");
        Encoding.UTF8.GetString(message.Body.Span).Should().Be("hello");
        message.DeliveryCount.Should().Be(1);
        message.LockToken.Should().NotBe(Guid.Empty);
        message.LockedUntil.Should().Be(_clock.GetUtcNow() + Lock);
        (await queue.ReceiveAsync()).Should().BeNull();
        queue.GetStatistics().Should().BeEquivalentTo(new { Sent = 1, Received = 1, InFlight = 1, Available = 0 });
        queue.GetStatistics().ShouldBeConsistent();
    }

    [Fact]
    public async Task Receive_EmptyQueue_ReturnsNull()
    {
        (await CreateQueue().ReceiveAsync()).Should().BeNull();
    }

    [Fact]
    public async Task Renew_ValidLock_ExtendsFromNow()
    {
        var queue = CreateQueue();
        queue.Send(Body());
        var message = (await queue.ReceiveAsync())!;

        _clock.Advance(TimeSpan.FromSeconds(25));
        var lockedUntil = await message.RenewLockAsync();
        _clock.Advance(TimeSpan.FromSeconds(25));
        await message.CompleteAsync();

        lockedUntil.Should().Be(_clock.GetUtcNow() - TimeSpan.FromSeconds(25) + Lock);
        message.LockedUntil.Should().Be(lockedUntil);
        var stats = queue.GetStatistics();
        stats.Should().BeEquivalentTo(new { Renewals = 1, Completed = 1, LeasesLost = 0, InFlight = 0 });
        stats.ShouldBeConsistent();
    }

    [Fact]
    public async Task Renew_AfterExpiry_ThrowsLeaseLost_AndMessageIsRedeliveredWithCountPlusOne()
    {
        var queue = CreateQueue();
        queue.Send(Body(), "m1");
        var first = (InMemoryMessage)(await queue.ReceiveAsync())!;

        _clock.Advance(Lock);

        await first.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();
        var second = (InMemoryMessage)(await queue.ReceiveAsync())!;
        second.MessageId.Should().Be("m1");
        second.DeliveryCount.Should().Be(2);
        second.LockToken.Should().NotBe(first.LockToken);
        await first.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        await second.CompleteAsync();

        var stats = queue.GetStatistics();
        stats.Should().BeEquivalentTo(new { Received = 2, Redelivered = 1, LeasesLost = 1, LeaseLostErrors = 2, Completed = 1 });
        stats.ShouldBeConsistent();
    }

    [Fact]
    public async Task Expiry_MakesMessageVisibleAgain_OnlyWhenTheLockRunsOut()
    {
        var queue = CreateQueue();
        queue.Send(Body());
        _ = await queue.ReceiveAsync();

        _clock.Advance(Lock - TimeSpan.FromTicks(1));
        (await queue.ReceiveAsync()).Should().BeNull();
        _clock.Advance(TimeSpan.FromTicks(1));
        (await queue.ReceiveAsync())!.DeliveryCount.Should().Be(2);
    }

    [Fact]
    public async Task Abandon_ReleasesAtOnce_ForRedelivery()
    {
        var queue = CreateQueue();
        queue.Send(Body(), "m1");
        var first = (await queue.ReceiveAsync())!;

        await first.AbandonAsync();
        var second = (await queue.ReceiveAsync())!;

        second.MessageId.Should().Be("m1");
        second.DeliveryCount.Should().Be(2);
        await first.Invoking(m => m.AbandonAsync()).Should().ThrowAsync<LeaseLostException>();
        queue.GetStatistics().Should().BeEquivalentTo(new { Abandoned = 1, Redelivered = 1, InFlight = 1 });
        queue.GetStatistics().ShouldBeConsistent();
    }

    [Fact]
    public async Task MaxDeliveryCount_Abandoned_DeadLetters()
    {
        var queue = CreateQueue(new InMemoryQueueOptions { LockDuration = Lock, MaxDeliveryCount = 3 });
        queue.Send(Body(), "m1");

        for (var i = 0; i < 3; i++)
        {
            await (await queue.ReceiveAsync())!.AbandonAsync();
        }

        (await queue.ReceiveAsync()).Should().BeNull();
        queue.GetDeadLetters().Should().Equal(new InMemoryDeadLetter("m1", InMemoryQueue.MaxDeliveryCountExceededReason, 3));
        var stats = queue.GetStatistics();
        stats.Should().BeEquivalentTo(new { Received = 3, Abandoned = 3, DeadLettered = 1, MaxDeliveryDeadLettered = 1 });
        stats.ShouldBeConsistent();
    }

    [Fact]
    public async Task MaxDeliveryCount_Expired_DeadLetters()
    {
        var queue = CreateQueue(new InMemoryQueueOptions { LockDuration = Lock, MaxDeliveryCount = 2 });
        queue.Send(Body(), "m1");

        _ = await queue.ReceiveAsync();
        _clock.Advance(Lock);
        _ = await queue.ReceiveAsync();
        _clock.Advance(Lock);

        (await queue.ReceiveAsync()).Should().BeNull();
        var stats = queue.GetStatistics();
        stats.Should().BeEquivalentTo(new { LeasesLost = 2, DeadLettered = 1, MaxDeliveryDeadLettered = 1 });
        stats.ShouldBeConsistent();
    }

    [Fact]
    public async Task Complete_RemovesExactlyOnce()
    {
        var queue = CreateQueue();
        queue.Send(Body());
        var message = (await queue.ReceiveAsync())!;

        await message.CompleteAsync();

        await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<LeaseLostException>();
        await message.Invoking(m => m.RenewLockAsync()).Should().ThrowAsync<LeaseLostException>();
        _clock.Advance(Lock * 3);
        (await queue.ReceiveAsync()).Should().BeNull();
        var stats = queue.GetStatistics();
        stats.Should().BeEquivalentTo(new { Completed = 1, LeaseLostErrors = 2, LeasesLost = 0, InFlight = 0, Available = 0 });
        stats.ShouldBeConsistent();
    }

    [Fact]
    public async Task DeadLetter_ByConsumer_KeepsReason()
    {
        var queue = CreateQueue();
        queue.Send(Body(), "m1");

        await (await queue.ReceiveAsync())!.DeadLetterAsync("poison");

        queue.GetDeadLetters().Should().Equal(new InMemoryDeadLetter("m1", "poison", 1));
        queue.GetStatistics().Should().BeEquivalentTo(new { DeadLettered = 1, MaxDeliveryDeadLettered = 0 });
        queue.GetStatistics().ShouldBeConsistent();
    }

    [Fact]
    public async Task FaultInjection_IsSeeded_AndAFailedCallHasNoEffect()
    {
        static async Task<string> Pattern(VirtualTimeProvider clock)
        {
            var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { RenewFailureRate = 0.5, FaultSeed = 42 });
            queue.Send(Body());
            var message = (await queue.ReceiveAsync())!;
            var pattern = new StringBuilder();
            for (var i = 0; i < 40; i++)
            {
                try
                {
                    await message.RenewLockAsync();
                    pattern.Append('+');
                }
                catch (TransientTransportException)
                {
                    pattern.Append('-');
                }
            }

            queue.GetStatistics().ShouldBeConsistent();
            return pattern.ToString();
        }

        var first = await Pattern(new VirtualTimeProvider());
        var second = await Pattern(new VirtualTimeProvider());

        first.Should().Be(second).And.Contain("+").And.Contain("-");
    }

    [Fact]
    public async Task FaultInjection_FailedComplete_LeavesMessageLocked()
    {
        var queue = CreateQueue(new InMemoryQueueOptions { LockDuration = Lock, CompleteFailureRate = 1 });
        queue.Send(Body());
        var message = (await queue.ReceiveAsync())!;

        await message.Invoking(m => m.CompleteAsync()).Should().ThrowAsync<TransientTransportException>();

        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 0, InFlight = 1, TransientFaults = 1 });
        await message.AbandonAsync();
        queue.GetStatistics().ShouldBeConsistent();
    }

    [Fact]
    public async Task Latency_IsAwaitedOnTheBrokersClock()
    {
        var queue = CreateQueue(new InMemoryQueueOptions { LockDuration = Lock, Latency = TimeSpan.FromSeconds(2) });
        queue.Send(Body());

        var receive = queue.ReceiveAsync();
        receive.IsCompleted.Should().BeFalse();
        _clock.Advance(TimeSpan.FromSeconds(2));
        var message = await receive;

        message!.LockedUntil.Should().Be(_clock.GetUtcNow() + Lock);
    }

    [Fact]
    public async Task Receive_Canceled_Throws_AndLocksNothing()
    {
        var queue = CreateQueue(new InMemoryQueueOptions { Latency = TimeSpan.FromSeconds(1) });
        queue.Send(Body());
        using var cts = new CancellationTokenSource();

        var receive = queue.ReceiveAsync(cts.Token);
        cts.Cancel();

        await receive.Invoking(r => r).Should().ThrowAsync<OperationCanceledException>();
        queue.GetStatistics().Should().BeEquivalentTo(new { Received = 0, Available = 1 });
    }

    [Fact]
    public void Broker_QueueNames_AreUnique()
    {
        var broker = new InMemoryTransport(_clock);
        var queue = broker.CreateQueue("orders");

        broker.GetQueue("orders").Should().BeSameAs(queue);
        broker.Invoking(b => b.CreateQueue("orders")).Should().Throw<ArgumentException>().WithParameterName("name");
        broker.Invoking(b => b.GetQueue("missing")).Should().Throw<ArgumentException>().WithParameterName("name");
    }

    private static byte[] Body() => [1, 2, 3];

    private InMemoryQueue CreateQueue(InMemoryQueueOptions? options = null) =>
        new InMemoryTransport(_clock).CreateQueue("q", options ?? new InMemoryQueueOptions { LockDuration = Lock });
}
