namespace PriorityAsync.MessagePump.Tests.InMemory;

/// <summary>How the in-memory broker's objects describe themselves, its default clock, and the checks on its calls.</summary>
public class InMemoryDescriptionsTests
{
    [Fact]
    public async Task QueueAndMessage_DescribeThemselves()
    {
        var queue = new InMemoryTransport(new VirtualTimeProvider()).CreateQueue("orders");
        queue.Send(new byte[] { 1 }, "m1");
        var message = (InMemoryMessage)(await queue.ReceiveAsync())!;

        queue.ToString().Should().Be("InMemoryQueue 'orders'");
        message.ToString().Should().Be($"m1 (delivery 1, lock {message.LockToken})");
    }

    [Fact]
    public async Task SentWithoutAnId_AMessageIsNamedAfterItsQueue_InOrder()
    {
        var queue = new InMemoryTransport(new VirtualTimeProvider()).CreateQueue("orders");

        queue.Send(new byte[] { 1 }).Should().Be("orders-1");
        queue.Send(new byte[] { 2 }).Should().Be("orders-2");
        (await queue.ReceiveAsync())!.MessageId.Should().Be("orders-1");
    }

    [Fact]
    public void Broker_WithoutAClock_UsesTheSystemClock()
    {
        new InMemoryTransport().TimeProvider.Should().BeSameAs(TimeProvider.System);
        new InMemoryTransport().CreateQueue("q").TimeProvider.Should().BeSameAs(TimeProvider.System);
    }

    [Fact]
    public async Task DeadLetter_WithABlankReason_IsRejected_AndTheLockIsKept()
    {
        var queue = new InMemoryTransport(new VirtualTimeProvider()).CreateQueue("q");
        queue.Send(new byte[] { 1 }, "m1");
        var message = (await queue.ReceiveAsync())!;

        await message.Invoking(m => m.DeadLetterAsync(" ")).Should().ThrowAsync<ArgumentException>().WithParameterName("reason");
        queue.GetStatistics().Should().BeEquivalentTo(new { DeadLettered = 0, InFlight = 1 });
    }

    [Fact]
    public void Broker_NamesTheQueueItLacksOrHasTwice()
    {
        var broker = new InMemoryTransport();
        broker.CreateQueue("orders");

        broker.Invoking(b => b.CreateQueue("orders")).Should().Throw<ArgumentException>().WithMessage("The broker already has a queue named 'orders'.*");
        broker.Invoking(b => b.GetQueue("missing")).Should().Throw<ArgumentException>().WithMessage("The broker has no queue named 'missing'.*");
        broker.Invoking(b => b.GetQueue(null!)).Should().Throw<ArgumentNullException>().WithParameterName("name");
    }
}
