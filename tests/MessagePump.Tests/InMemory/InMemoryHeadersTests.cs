namespace PriorityAsync.MessagePump.Tests.InMemory;

/// <summary>Headers sent with an <see cref="InMemoryQueue"/> message come back on every delivery.</summary>
public class InMemoryHeadersTests
{
    [Fact]
    public async Task Headers_RoundTrip_OnEveryDelivery_AndAreCopiedAtSend()
    {
        var queue = new InMemoryTransport(new VirtualTimeProvider()).CreateQueue("q");
        var headers = new Dictionary<string, string> { ["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", ["tenant"] = "a" };
        queue.Send(new byte[] { 1 }, "m1", headers);
        headers["tenant"] = "changed after send";
        queue.Send(new byte[] { 2 }, "m2");

        var first = (await queue.ReceiveAsync())!;
        first.Headers.Should().BeEquivalentTo(new Dictionary<string, string> { ["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", ["tenant"] = "a" });
        await first.AbandonAsync();
        var second = (await queue.ReceiveAsync())!;
        second.MessageId.Should().Be("m2");
        second.Headers.Should().BeEmpty("a message sent without headers has none");
        var redelivered = (await queue.ReceiveAsync())!;
        redelivered.MessageId.Should().Be("m1");
        redelivered.DeliveryCount.Should().Be(2);
        redelivered.Headers.Should().BeEquivalentTo(first.Headers);
    }

    [Fact]
    public void Headers_WithANullValue_AreRejected()
    {
        var queue = new InMemoryTransport(new VirtualTimeProvider()).CreateQueue("q");
        var act = () => queue.Send(new byte[] { 1 }, null, new Dictionary<string, string> { ["x"] = null! });
        act.Should().Throw<ArgumentException>().Which.ParamName.Should().Be("headers");
        queue.GetStatistics().Sent.Should().Be(0);
    }

    [Fact]
    public void Headers_OfAnAdapterWithoutThem_AreEmpty()
    {
        ILeasedMessage message = new BareMessage();
        message.Headers.Should().BeEmpty();
    }

    private sealed class BareMessage : ILeasedMessage
    {
        public string MessageId => "m";

        public ReadOnlyMemory<byte> Body => default;

        public int DeliveryCount => 1;

        public DateTimeOffset LockedUntil => DateTimeOffset.MaxValue;

        public Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default) => Task.FromResult(LockedUntil);

        public Task CompleteAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task AbandonAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => Task.CompletedTask;
    }
}
