using Microsoft.Extensions.Logging;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Reliability.Tests.Swarm;

/// <summary>
/// One deterministic simulation run: a <see cref="PriorityMessagePump"/> on the in-memory broker with latency, transient
/// renew and complete failures, poison and flaky messages and CPU-heavy handlers, stopped at a random moment, then a
/// second pump drains the queue to the end. One thread, virtual time, one seed: a run replays bit for bit.
/// </summary>
internal static class SwarmScenario
{
    private const byte Normal = 0;
    private const byte Poison = 1;
    private const byte Flaky = 2;
    private static readonly TimeSpan DrainLimit = TimeSpan.FromHours(6);

    /// <summary>Runs seed <paramref name="seed"/>; <paramref name="logger"/> (optional) receives both pumps' events, in order.</summary>
    public static SwarmOutcome Run(int seed, ILogger? logger = null)
    {
        var p = SwarmParameters.From(seed);
        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("swarm", new InMemoryQueueOptions
        {
            LockDuration = p.LockDuration,
            MaxDeliveryCount = p.MaxDeliveryCount,
            Latency = p.Latency,
            RenewFailureRate = p.RenewFailureRate,
            CompleteFailureRate = p.CompleteFailureRate,
            FaultSeed = seed,
        });
        var poison = new List<string>();
        for (var i = 0; i < p.Messages; i++)
        {
            var kind = i < p.PoisonMessages ? Poison : i < p.PoisonMessages + p.FlakyMessages ? Flaky : Normal;
            var id = queue.Send(new[] { kind }, $"m{i}");
            if (kind == Poison)
            {
                poison.Add(id);
            }
        }

        MessagePumpStatistics? stopped = null;
        MessagePumpStatistics? afterStop = null;
        MessagePumpStatistics? drain = null;
        InMemoryQueueStatistics? atStop = null;
        PriorityAsyncContext.Run(
            async () =>
            {
                var scheduler = PriorityScheduler.Current!;
                var first = new PriorityMessagePump(queue, (c, t) => HandleAsync(c, t, p, clock), scheduler, PumpOptions(p, p.ShutdownTimeout), logger);
                await first.StartAsync();
                await Task.Delay(p.StopAfter, scheduler.TimeProvider);
                await first.StopAsync();
                atStop = queue.GetStatistics(); // no lock may be left the moment StopAsync returns
                stopped = first.GetStatistics(); // and the pump's books are final then

                // Handlers canceled at the stop return on their next turn (they honour their token): nothing changes.
                await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
                afterStop = first.GetStatistics();

                var second = new PriorityMessagePump(queue, (c, t) => HandleAsync(c, t, p, clock), scheduler, PumpOptions(p, TimeSpan.FromMinutes(10)), logger);
                await second.StartAsync();
                var deadline = clock.GetUtcNow() + DrainLimit;
                while (!IsDrained(queue.GetStatistics()) && clock.GetUtcNow() < deadline)
                {
                    await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
                }

                await second.StopAsync();
                drain = second.GetStatistics();
            },
            new PrioritySchedulerOptions { TimeProvider = clock, Name = $"swarm-{seed}" });

        var atEnd = queue.GetStatistics();
        var invariants = new SwarmInvariants();
        invariants.Broker("stop", atStop!);
        invariants.StoppedPump("stop", stopped!, atStop!);
        invariants.BooksAgree("stop", atStop!, stopped!);
        invariants.Unchanged("a second after the stop", stopped!, afterStop!);
        invariants.Broker("end", atEnd);
        invariants.StoppedPump("end", drain!, atEnd);
        invariants.BooksAgree("end", atEnd, stopped!, drain!);
        invariants.EveryMessageEndedOnce(atEnd, queue.GetDeadLetters(), poison);
        return new SwarmOutcome(seed, stopped!, atStop!, drain!, atEnd, clock.Elapsed, invariants.Violations);
    }

    private static MessagePumpOptions PumpOptions(SwarmParameters p, TimeSpan shutdownTimeout) => new()
    {
        MaxInFlight = p.MaxInFlight,
        ShutdownTimeout = shutdownTimeout,
        TransientRetryDelay = TimeSpan.FromMilliseconds(200),
        EmptyReceiveDelay = TimeSpan.FromMilliseconds(500),
    };

    private static bool IsDrained(InMemoryQueueStatistics s) => s.Available == 0 && s.InFlight == 0 && s.AwaitingRedelivery == 0;

    /// <summary>CPU slices (the clock moves while the thread is held) between awaited IO; poison and flaky messages throw.</summary>
    private static async Task HandleAsync(MessageContext context, CancellationToken token, SwarmParameters p, VirtualTimeProvider clock)
    {
        var kind = context.Message.Body.Span[0];
        if (kind == Poison || (kind == Flaky && context.Message.DeliveryCount == 1))
        {
            throw new InvalidOperationException($"{context.Message.MessageId} cannot be processed (kind {kind}).");
        }

        for (var step = 0; step < p.Steps; step++)
        {
            clock.Advance(p.CpuSlice);
            await Task.Delay(p.IoWait, context.TimeProvider, token);
        }
    }
}
