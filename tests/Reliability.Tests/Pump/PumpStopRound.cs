using PriorityAsync.MessagePump;
using PriorityAsync.Reliability.Tests.Swarm;

namespace PriorityAsync.Reliability.Tests.Pump;

/// <summary>
/// One seeded stop at a random moment: a pump on a broker with latency, transient renew and complete failures, settle
/// calls that sometimes never answer (honouring their token or not), poison messages and CPU slices, stopped at a
/// random moment; then a second pump drains the queue. One thread, virtual time: a seed replays bit for bit.
/// </summary>
internal static class PumpStopRound
{
    private static readonly TimeSpan Patience = TimeSpan.FromHours(1);

    /// <summary>Runs seed <paramref name="seed"/>; returns what it broke (empty when every check held) and a summary.</summary>
    public static (IReadOnlyList<string> Violations, string Summary, bool Silenced) Run(int seed)
    {
        var random = new Random(seed);
        var lockDuration = TimeSpan.FromMilliseconds(random.Next(2_000, 10_001));
        var latency = TimeSpan.FromMilliseconds(random.Next(0, 301));
        var cpuSlice = TimeSpan.FromMilliseconds(random.Next(0, (int)(lockDuration.TotalMilliseconds / 4)));
        var io = TimeSpan.FromMilliseconds(random.Next(0, 1_001));
        var shutdownTimeout = TimeSpan.FromMilliseconds(random.Next(0, 3_001));
        var retryDelay = TimeSpan.FromMilliseconds(random.Next(100, 501));
        var stopAfter = TimeSpan.FromMilliseconds(random.Next(0, 20_001));
        var silentRate = random.Next(0, 2) == 0 ? 0 : random.NextDouble() * 0.3;
        var honourToken = random.Next(0, 2) == 0;
        var maxInFlight = random.Next(1, 5);
        var messages = random.Next(1, 11);
        var poison = random.Next(0, Math.Min(2, messages) + 1);
        var summary = $"seed {seed}: lock {lockDuration.TotalMilliseconds} ms, latency {latency.TotalMilliseconds} ms, CPU slice {cpuSlice.TotalMilliseconds} ms, " +
            $"shutdown timeout {shutdownTimeout.TotalMilliseconds} ms, stop after {stopAfter.TotalMilliseconds} ms, silent settles {silentRate:P0} (token honoured: {honourToken}), " +
            $"{messages} messages ({poison} poison), {maxInFlight} in flight";

        var clock = new VirtualTimeProvider();
        var queue = new InMemoryTransport(clock).CreateQueue("stop", new InMemoryQueueOptions
        {
            LockDuration = lockDuration,
            Latency = latency,
            RenewFailureRate = random.NextDouble() * 0.2,
            CompleteFailureRate = random.NextDouble() * 0.3,
            MaxDeliveryCount = 10,
            FaultSeed = seed,
        });
        var sent = Enumerable.Range(0, messages).Select(i => queue.Send(new[] { (byte)(i < poison ? 1 : 0) }, $"m{i}")).ToArray();
        var poisonIds = sent.Take(poison).ToArray();
        var source = new SilentSettlements(queue, _ => silentRate > 0 && random.NextDouble() < silentRate, honourToken);
        var bound = shutdownTimeout + lockDuration + retryDelay + cpuSlice + cpuSlice + latency;

        var invariants = new SwarmInvariants();
        var returnedAfter = TimeSpan.MinValue;
        MessagePumpStatistics? stopped = null;
        MessagePumpStatistics? later = null;
        MessagePumpStatistics? drain = null;
        InMemoryQueueStatistics? atStop = null;
        PriorityAsyncContext.Run(
            async () =>
            {
                var scheduler = PriorityScheduler.Current!;
                var options = new MessagePumpOptions { MaxInFlight = maxInFlight, ShutdownTimeout = shutdownTimeout, TransientRetryDelay = retryDelay, LeaseKeeper = new() { TransientRetryDelay = retryDelay }, EmptyReceiveDelay = TimeSpan.FromMilliseconds(500) };
                var first = new PriorityMessagePump(source, HandleAsync, scheduler, options);
                await first.StartAsync();
                await Task.Delay(stopAfter, scheduler.TimeProvider);
                var start = clock.GetUtcNow();
                var stop = RecordAsync(first.StopAsync());
                var deadline = start + Patience;
                while (!stop.IsCompleted && clock.GetUtcNow() < deadline)
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(100), scheduler.TimeProvider);
                }

                if (!stop.IsCompleted)
                {
                    return; // reported below as a hang
                }

                await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
                later = first.GetStatistics();

                var second = new PriorityMessagePump(queue, HandleAsync, scheduler, options);
                await second.StartAsync();
                while (queue.GetStatistics() is { } s && (s.Available > 0 || s.InFlight > 0 || s.AwaitingRedelivery > 0) && clock.GetUtcNow() < deadline)
                {
                    await Task.Delay(TimeSpan.FromSeconds(1), scheduler.TimeProvider);
                }

                await second.StopAsync();
                drain = second.GetStatistics();

                async Task RecordAsync(Task stopping)
                {
                    await stopping;
                    returnedAfter = clock.GetUtcNow() - start;
                    atStop = queue.GetStatistics();
                    stopped = first.GetStatistics();
                }
            },
            new PrioritySchedulerOptions { TimeProvider = clock, Name = $"stop-{seed}" });

        if (stopped is null || atStop is null || later is null || drain is null)
        {
            return ([$"StopAsync did not return within {Patience} of virtual time"], summary, source.SilentCalls > 0);
        }

        if (returnedAfter > bound)
        {
            return ([$"StopAsync took {returnedAfter}, more than ShutdownTimeout + lock + TransientRetryDelay + 2 CPU slices + latency = {bound}"], summary, source.SilentCalls > 0);
        }

        var end = queue.GetStatistics();
        invariants.Broker("stop", atStop);
        invariants.StoppedPump("stop", stopped, atStop);
        invariants.BooksAgree("stop", atStop, stopped);
        invariants.Unchanged("a second after the stop", stopped, later);
        invariants.Broker("end", end);
        invariants.StoppedPump("end", drain, end);
        invariants.BooksAgree("end", end, stopped, drain);
        invariants.EveryMessageEndedOnce(end, queue.GetDeadLetters(), poisonIds);
        return (invariants.Violations, summary, source.SilentCalls > 0);

        async Task HandleAsync(MessageContext context, CancellationToken token)
        {
            if (context.Message.Body.Span[0] == 1)
            {
                throw new InvalidOperationException($"{context.Message.MessageId} is poison.");
            }

            clock.Advance(cpuSlice);
            await Task.Delay(io, context.TimeProvider, token);
        }
    }
}
