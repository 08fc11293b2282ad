using System.Collections.Concurrent;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>
/// The seed article's scenario on ONE thread and virtual time: CPU-heavy handlers (1 s CPU + 1 s I/O, 20 times),
/// 30 s locks. The pump keeps every lease; the naive consumer, with the same handler, loses them.
/// </summary>
public class SingleThreadLeaseTests(ITestOutputHelper output)
{
    private const int Messages = 20;
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan Cpu = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan Io = TimeSpan.FromSeconds(1);

    [Fact]
    public void Pump_CpuHeavyHandlers_OneThread_KeepsEveryLease_AndCompletesEachMessageOnce()
    {
        var clock = new VirtualTimeProvider();
        var queue = CreateQueue(clock);
        var work = new CpuHeavyWork(clock, Cpu, Io);
        var handled = new ConcurrentDictionary<string, int>();
        ReceiveSpy? spy = null;
        MessagePumpStatistics? stats = null;
        var maxInFlight = 0;

        VirtualRun.Run(clock, async scheduler =>
        {
            spy = new ReceiveSpy(queue, scheduler);
            await using var pump = new PriorityMessagePump(
                spy,
                async (context, cancellationToken) =>
                {
                    PriorityScheduler.CurrentLane.Should().BeSameAs(scheduler.GetLane(LanePriority.Processing));
                    await work.RunAsync(context.TimeProvider, cancellationToken);
                    handled.AddOrUpdate(context.Message.MessageId, 1, (_, n) => n + 1);
                },
                scheduler,
                new MessagePumpOptions { Name = "single-thread-cpu" });
            spy.Pump = pump;
            maxInFlight = pump.MaxInFlight;
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == Messages, scheduler.TimeProvider, TimeSpan.FromHours(2));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        var broker = queue.GetStatistics();
        output.WriteLine($"pump: {stats}\nbroker: {broker}\nvirtual time: {clock.Elapsed}");
        maxInFlight.Should().Be(MessagePumpOptions.DefaultInFlightPerWorker, "one thread times the default factor");
        stats!.LeasesLost.Should().Be(0);
        broker.Should().BeEquivalentTo(new { Sent = Messages, Received = Messages, Completed = Messages, LeasesLost = 0, LeaseLostErrors = 0, Redelivered = 0, InFlight = 0 });
        broker.ShouldBeConsistent();
        handled.Should().HaveCount(Messages).And.OnlyContain(pair => pair.Value == 1);
        stats.Should().BeEquivalentTo(new { Received = Messages, Completed = Messages, Abandoned = 0, InFlight = 0 });
        stats.Renewals.Should().Be(broker.Renewals).And.BePositive("each message outlives its first lock");
        stats.PeakInFlight.Should().BeInRange(2, maxInFlight, "receive runs only on idle CPU: two half-CPU messages keep the thread busy");
        stats.ShouldBeConsistent();
        stats.ShouldMatch(broker);
        spy!.ReceivesWhileUrgentWorkReady.Should().Be(0, "receive runs only when no lease or processing work is ready");
        spy.ReceivesOverCapacity.Should().Be(0);
    }

    [Fact]
    public void NaiveConsumer_SameHandler_OneLane_GreedyReceive_LosesLeases()
    {
        var clock = new VirtualTimeProvider();
        var queue = CreateQueue(clock);
        var work = new CpuHeavyWork(clock, Cpu, Io);
        NaiveConsumer? consumer = null;

        VirtualRun.Run(
            clock,
            async scheduler =>
            {
                consumer = new NaiveConsumer(queue, work.RunAsync, scheduler.TimeProvider, renewEvery: TimeSpan.FromSeconds(20));
                await consumer.RunAsync(() => queue.GetStatistics() is { Completed: var c, DeadLettered: var d } && c + d == Messages);
            },
            lanes: [new LaneOptions("Everything")]);

        var broker = queue.GetStatistics();
        output.WriteLine($"naive: {consumer!.HandlerRuns} handler runs, {consumer.CompleteLeaseLost} completes failed\nbroker: {broker}\nvirtual time: {clock.Elapsed}");
        broker.LeasesLost.Should().BeGreaterThanOrEqualTo(Messages, "renewals wait behind CPU-heavy continuations in one FIFO queue");
        consumer.CompleteLeaseLost.Should().BePositive("finished work is thrown away");
        consumer.HandlerRuns.Should().BeGreaterThan(Messages);
        broker.Completed.Should().BeLessThan(Messages);
        broker.ShouldBeConsistent();
    }

    [Fact]
    public void Pump_LeaseLostMidHandler_CancelsHandler_AndDoesNotComplete()
    {
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = LockDuration });
        queue.Send(new byte[] { 1 }, "m1");
        var observed = new List<(int Delivery, MessageLeaseState State, bool Canceled)>();
        MessagePumpStatistics? stats = null;

        VirtualRun.Run(clock, async scheduler =>
        {
            await using var pump = new PriorityMessagePump(
                queue,
                async (context, cancellationToken) =>
                {
                    if (context.Message.DeliveryCount == 1)
                    {
                        clock.Advance(LockDuration * 2); // one slice longer than the lock: no renewal can run
                        try
                        {
                            await Task.Delay(Io, context.TimeProvider, cancellationToken);
                        }
                        finally
                        {
                            observed.Add((1, context.LeaseState, cancellationToken.IsCancellationRequested));
                        }
                    }

                    observed.Add((context.Message.DeliveryCount, context.LeaseState, cancellationToken.IsCancellationRequested));
                },
                scheduler);
            await pump.StartAsync();
            await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == 1, scheduler.TimeProvider, TimeSpan.FromHours(1));
            await pump.StopAsync();
            stats = pump.GetStatistics();
        });

        observed.Should().Equal((1, MessageLeaseState.Lost, true), (2, MessageLeaseState.Held, false));
        stats.Should().BeEquivalentTo(new { Received = 2, Completed = 1, LeasesLost = 1, HandlerFailures = 0, Abandoned = 0 });
        var broker = queue.GetStatistics();
        broker.Should().BeEquivalentTo(new { Completed = 1, LeasesLost = 1, LeaseLostErrors = 0, Redelivered = 1 }, "the keeper saw the lock run out and sent no renewal");
        broker.ShouldBeConsistent();
        stats!.ShouldBeConsistent();
        stats.ShouldMatch(broker);
    }

    private static InMemoryQueue CreateQueue(VirtualTimeProvider clock)
    {
        var queue = new InMemoryTransport(clock).CreateQueue("q", new InMemoryQueueOptions { LockDuration = LockDuration, MaxDeliveryCount = 3 });
        for (var i = 0; i < Messages; i++)
        {
            queue.Send(BitConverter.GetBytes(i), $"m{i}");
        }

        return queue;
    }
}
