using System.Collections.Concurrent;

namespace PriorityAsync.MessagePump.Tests.Pump;

/// <summary>The pump on a multi-thread <see cref="PriorityTaskScheduler"/> in real time. Asserts outcomes only, never timings.</summary>
public class MultiThreadPumpTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(20);

    [Theory]
    [InlineData(PriorityWorkerMode.DedicatedThreads)]
    [InlineData(PriorityWorkerMode.ThreadPool)]
    public async Task ManyMessages_CompletedExactlyOnce_InTheirLanes(PriorityWorkerMode mode)
    {
        const int messages = 300;
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2, Mode = mode });
        var queue = new InMemoryTransport().CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(BitConverter.GetBytes(i), $"m{i}");
        }

        var handled = new ConcurrentBag<string>();
        var wrongLane = 0;
        var pump = new PriorityMessagePump(
            queue,
            async (context, cancellationToken) =>
            {
                if (PriorityScheduler.CurrentLane != scheduler.GetLane(LanePriority.Processing))
                {
                    Interlocked.Increment(ref wrongLane);
                }

                Thread.SpinWait(1000);
                await PriorityScheduler.YieldIfNeeded();
                await Task.Yield();
                if (PriorityScheduler.CurrentLane != scheduler.GetLane(LanePriority.Processing))
                {
                    Interlocked.Increment(ref wrongLane);
                }

                handled.Add(context.Message.MessageId);
            },
            scheduler);

        await pump.StartAsync();
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, TimeProvider.System, Patience, TimeSpan.FromMilliseconds(10));
        await pump.StopAsync();

        pump.MaxInFlight.Should().Be(2 * MessagePumpOptions.DefaultInFlightPerWorker);
        wrongLane.Should().Be(0);
        handled.Should().OnlyHaveUniqueItems().And.HaveCount(messages);
        var stats = pump.GetStatistics();
        stats.Should().BeEquivalentTo(new { Received = messages, Completed = messages, Abandoned = 0, LeasesLost = 0, InFlight = 0 });
        stats.PeakInFlight.Should().BeInRange(1, pump.MaxInFlight);
        var broker = queue.GetStatistics();
        broker.Should().BeEquivalentTo(new { Received = messages, Completed = messages, InFlight = 0, Available = 0 });
        broker.ShouldBeConsistent();
        stats.ShouldBeConsistent();
        stats.ShouldMatch(broker);
    }

    [Fact]
    public async Task HandlersOutliveTheLock_AreRenewed_AndEachMessageCompletesOnce()
    {
        const int messages = 4;
        await using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
        var queue = new InMemoryTransport().CreateQueue("q", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(1) });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(BitConverter.GetBytes(i));
        }

        var pump = new PriorityMessagePump(
            queue,
            (context, cancellationToken) => Task.Delay(TimeSpan.FromSeconds(1.6), context.TimeProvider, cancellationToken),
            scheduler,
            new MessagePumpOptions { MaxInFlight = messages });

        await pump.StartAsync();
        await VirtualRun.WaitUntilAsync(() => queue.GetStatistics().Completed == messages, TimeProvider.System, Patience, TimeSpan.FromMilliseconds(10));
        await pump.StopAsync();

        var stats = pump.GetStatistics();
        var broker = queue.GetStatistics();
        stats.Renewals.Should().BePositive().And.Be(broker.Renewals);
        stats.LeasesLost.Should().Be(broker.LeasesLost);
        stats.Received.Should().Be(stats.Completed + stats.Abandoned + stats.LeasesLost);
        broker.Should().BeEquivalentTo(new { Completed = messages, InFlight = 0, Available = 0 });
        broker.ShouldBeConsistent();
    }
}
