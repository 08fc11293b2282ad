using PriorityAsync.MessagePump;
using PriorityAsync.Reliability.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.Reliability.Tests.Pump;

/// <summary>
/// One thread overloaded by the pump's own handlers on virtual time: every handler is a chain of CPU slices (the clock
/// moves while the thread is held) with <c>YieldIfNeeded</c> and a little I/O between them, far more CPU than the
/// thread has, on a slow broker. Every message completes exactly once and no lease is lost. Seeded, deterministic.
/// </summary>
public class PumpCpuOverloadTests(ITestOutputHelper output)
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(10);

    [Theory]
    [InlineData(21)]
    [InlineData(22)]
    [InlineData(23)]
    public void CpuHeavyHandlers_OnOneThread_EveryMessageCompletedOnce_NoLeaseLost(int seed)
    {
        var random = new Random(seed);
        var messages = ReliabilitySettings.Long ? 1_000 : 100;
        var slice = TimeSpan.FromMilliseconds(random.Next(100, 1_000));
        var steps = (int)Math.Ceiling(LockDuration * 2 / slice) + random.Next(0, 10); // each handler outlasts two locks
        var io = TimeSpan.FromMilliseconds(random.Next(0, 500));
        var latency = TimeSpan.FromMilliseconds(random.Next(0, 100));
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("cpu", new InMemoryQueueOptions { LockDuration = LockDuration, Latency = latency, MaxDeliveryCount = 1 });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[] { 1 });
        }

        var handled = new Dictionary<string, int>();
        MessagePumpStatistics? stats = null;
        PriorityAsyncContext.Run(
            async () =>
            {
                var scheduler = PriorityScheduler.Current!;
                var pump = new PriorityMessagePump(
                    queue,
                    async (context, token) =>
                    {
                        for (var step = 0; step < steps; step++)
                        {
                            clock.Advance(slice);
                            await PriorityScheduler.YieldIfNeeded();
                            await Task.Delay(io, context.TimeProvider, token);
                        }

                        handled[context.Message.MessageId] = handled.GetValueOrDefault(context.Message.MessageId) + 1;
                    },
                    scheduler,
                    new MessagePumpOptions { MaxInFlight = 8 });
                await pump.StartAsync();
                var deadline = clock.GetUtcNow() + TimeSpan.FromDays(2);
                while (queue.GetStatistics() is { } s && s.Completed + s.DeadLettered < messages && clock.GetUtcNow() < deadline)
                {
                    await Task.Delay(TimeSpan.FromSeconds(10), scheduler.TimeProvider);
                }

                await pump.StopAsync();
                stats = pump.GetStatistics();
            },
            new PrioritySchedulerOptions { TimeProvider = clock, Name = $"cpu-{seed}" });

        var broker = queue.GetStatistics();
        var replay = $"seed {seed}: {messages} messages × {steps} slices of {slice.TotalMilliseconds} ms + {io.TotalMilliseconds} ms I/O, latency {latency.TotalMilliseconds} ms; " +
            $"replay: dotnet test tests/Reliability.Tests -c Release --filter \"FullyQualifiedName~PumpCpuOverloadTests&DisplayName~{seed}\"";
        output.WriteLine($"{replay}\n{clock.Elapsed} of virtual time; pump {stats}; broker {broker}");
        broker.Completed.Should().Be(messages, replay);
        broker.Received.Should().Be(messages, $"no delivery was lost and redelivered ({replay})");
        broker.LeasesLost.Should().Be(0, replay);
        stats!.LeasesLost.Should().Be(0, replay);
        stats.Renewals.Should().BePositive("the handlers outlast the lock, so the run proves renewals kept up ({0})", replay);
        handled.Values.Should().AllBeEquivalentTo(1, replay);
        handled.Should().HaveCount(messages);
    }
}
