using System.Diagnostics;
using System.Globalization;
using PriorityAsync.Benchmarks.LeaseLatency;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.KeeperLateness;

/// <summary>
/// Keeper lateness: how early the pump's keeper renews. N messages on the in-memory broker (2 s locks, 1 and
/// 20 ms per broker call), each handler 6-12 steps of a 2 ms CPU slice and 1 s of awaited I/O (3-6 lock periods,
/// seeded), default pump options, on one thread on virtual time (exact, load-independent) and on two workers on the
/// real clock. Per cell it prints, as min / median / p99 / max in milliseconds: the time from a message's answer (its
/// receive returned) to its first renewal answered, and the slack of every renewal (the lease's expiry before it minus
/// the time it was answered; negative is a lease renewed after it expired), with its slack when sent (the keeper's own
/// part, before the call's latency and the scheduling of its answer); then leases lost and renew calls. Uses only
/// public API that commit <c>3a8b389</c> (a keeper per message) has too, so the same files measure both trees (built
/// there with <c>BEFORE_ISSUE_23</c> defined: the in-memory broker's old name and no batch renewal).
/// </summary>
/// <remarks>Usage: <c>keeper-lateness [--smoke] [--messages N] [--seed N] [--workers 1|2] [--latency 1|20]</c> (the last two pick cells); <c>--smoke</c> runs 40 messages on one thread only. It
/// fails when a message is not received and completed exactly once, or a lease is lost on virtual time.</remarks>
internal static class KeeperLatenessHarness
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(2);
    private static readonly TimeSpan Slice = TimeSpan.FromMilliseconds(2);
    private static readonly TimeSpan Io = TimeSpan.FromSeconds(1);

    public static int Run(string[] args)
    {
        var smoke = args.Contains("--smoke");
        var messages = (int)(HarnessOptions.Read(args, "--messages") ?? (smoke ? 40 : 400));
        var seed = (int)(HarnessOptions.Read(args, "--seed") ?? 23);
        if (messages < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(args), messages, "--messages must be at least 1.");
        }

        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Keeper lateness: {messages} messages, {LockDuration.TotalSeconds:0} s locks, handlers of 6-12 × ({Slice.TotalMilliseconds:0} ms CPU + {Io.TotalSeconds:0} s awaited), default options; seed {seed} (replay with --seed {seed})."));
        Console.WriteLine();
        Console.WriteLine("| scheduler | broker latency | messages | answer → first renewal (ms) min / median / p99 / max | slack at renewal (ms) min / median / p99 / max | slack when sent (ms) min / median | renewals | renew calls | leases lost |");
        Console.WriteLine("|---|---:|---:|---|---|---|---:|---:|---:|");
        var failed = false;
        var onlyWorkers = HarnessOptions.Read(args, "--workers");
        var onlyLatency = HarnessOptions.Read(args, "--latency");
        foreach (var workers in smoke ? [1] : new[] { 1, 2 })
        {
            foreach (var latencyMs in new[] { 1, 20 })
            {
                if ((onlyWorkers is { } w && w != workers) || (onlyLatency is { } l && l != latencyMs))
                {
                    continue;
                }

                failed |= !Measure(workers, latencyMs, messages, seed);
            }
        }

        return failed ? 1 : 0;
    }

    private static bool Measure(int workers, int latencyMs, int messages, int seed)
    {
        var clock = workers == 1 ? new VirtualTimeProvider() : TimeProvider.System;
#if BEFORE_ISSUE_23
        var broker = new InMemoryLeaseBroker(clock); // the in-memory broker's name at 3a8b389
#else
        var broker = new InMemoryTransport(clock);
#endif
        var queue = broker.CreateQueue("keeper-lateness", new InMemoryQueueOptions
        {
            LockDuration = LockDuration,
            Latency = TimeSpan.FromMilliseconds(latencyMs),
        });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[16]);
        }

        var log = new LatenessLog(clock);
        var source = new TimedSource(queue, log);
        MessagePumpStatistics stats;
        if (clock is VirtualTimeProvider virtualClock)
        {
            stats = PriorityAsyncContext.Run(
                () => DrainAsync(PriorityScheduler.Current!, source, queue, messages, seed, virtualClock),
                new PrioritySchedulerOptions { TimeProvider = clock });
        }
        else
        {
            using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = workers });
            stats = DrainAsync(scheduler, source, queue, messages, seed, virtualClock: null).GetAwaiter().GetResult();
        }

        var first = log.FirstRenewal();
        var counts = queue.GetStatistics();
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {(workers == 1 ? "one thread, virtual time" : "PriorityTaskScheduler, 2 workers, real clock")} | {latencyMs} ms | {messages} | {first} | {log.Slack()} | {log.SentSlack().ToShortString()} | {stats.Renewals} | {log.Calls} | {stats.LeasesLost} |"));
        if (counts.Completed != messages || counts.Received != messages)
        {
            Console.Error.WriteLine($"Expected {messages} messages received and completed once each, the broker counts {counts.Received} received and {counts.Completed} completed.");
            return false;
        }

        if (workers == 1 && stats.LeasesLost > 0)
        {
            // Virtual time is exact: no pause of the host explains a lost lease there.
            Console.Error.WriteLine($"{stats.LeasesLost} leases lost on virtual time at {latencyMs} ms per call.");
            return false;
        }

        return true;
    }

    private static async Task<MessagePumpStatistics> DrainAsync(PriorityScheduler scheduler, TimedSource source, InMemoryQueue queue, int messages, int seed, VirtualTimeProvider? virtualClock)
    {
        var clock = (TimeProvider?)virtualClock ?? TimeProvider.System; // the broker's clock (Measure)
        var random = new Random(seed);
        var steps = new int[messages];
        for (var i = 0; i < steps.Length; i++)
        {
            steps[i] = 6 + random.Next(7);
        }

        var next = -1;
        await using var pump = new PriorityMessagePump(
            source,
            async (context, token) =>
            {
                var count = steps[Interlocked.Increment(ref next) % steps.Length];
                for (var step = 0; step < count; step++)
                {
                    Busy(virtualClock);
                    await Task.Delay(Io, context.TimeProvider, token);
                }
            },
            scheduler,
            new MessagePumpOptions { TimeProvider = clock });
        await pump.StartAsync();
        var deadline = clock.GetUtcNow() + TimeSpan.FromMinutes(10);
        while (queue.GetStatistics().Completed < messages && clock.GetUtcNow() < deadline)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(100), clock);
        }

        await pump.StopAsync();
        return pump.GetStatistics();
    }

    /// <summary>A CPU slice holding the thread: the virtual clock moves on by it, the real one is spun.</summary>
    private static void Busy(VirtualTimeProvider? virtualClock)
    {
        if (virtualClock is not null)
        {
            virtualClock.Advance(Slice);
            return;
        }

        var started = Stopwatch.GetTimestamp();
        while (Stopwatch.GetElapsedTime(started) < Slice)
        {
            Thread.SpinWait(20);
        }
    }
}
