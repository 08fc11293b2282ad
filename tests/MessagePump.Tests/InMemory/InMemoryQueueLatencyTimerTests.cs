namespace PriorityAsync.MessagePump.Tests.InMemory;

/// <summary>
/// Each broker call with latency waits on a timer of the broker's clock: answered or canceled, its timer is disposed,
/// so a long simulation keeps no timer per call it ever made.
/// </summary>
public class InMemoryQueueLatencyTimerTests
{
    private readonly VirtualTimeProvider _virtual = new();

    [Fact]
    public async Task AnsweredCalls_DisposeTheirTimers()
    {
        var clock = new TrackingTimeProvider(_virtual);
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30), Latency = TimeSpan.FromSeconds(1) });
        queue.Send(new byte[] { 1 });
        queue.Send(new byte[] { 2 });

        var receive = queue.ReceiveBatchAsync(2);
        clock.Live.Should().Be(1, "the call waits on one timer");
        _virtual.Advance(TimeSpan.FromSeconds(1));
        var messages = await receive;
        var renew = messages[0].RenewLockAsync();
        var complete = queue.CompleteBatchAsync(messages);
        _virtual.Advance(TimeSpan.FromSeconds(1));
        await renew;
        await complete;

        clock.Created.Should().Be(3);
        clock.Live.Should().Be(0, "every answered call disposed its timer");
        queue.GetStatistics().Should().BeEquivalentTo(new { Completed = 2, Renewals = 1 });
    }

    [Fact]
    public async Task CanceledCalls_DisposeTheirTimers_AndNeverRun()
    {
        var clock = new TrackingTimeProvider(_virtual);
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { Latency = TimeSpan.FromSeconds(1) });
        queue.Send(new byte[] { 1 });
        using var cts = new CancellationTokenSource();

        var receive = queue.ReceiveAsync(cts.Token);
        await cts.CancelAsync();

        await receive.Invoking(r => r).Should().ThrowAsync<OperationCanceledException>();
        clock.Live.Should().Be(0, "the canceled call disposed its timer at once");
        _virtual.Advance(TimeSpan.FromSeconds(1));
        queue.GetStatistics().Should().BeEquivalentTo(new { Received = 0, Available = 1 });
    }
}
