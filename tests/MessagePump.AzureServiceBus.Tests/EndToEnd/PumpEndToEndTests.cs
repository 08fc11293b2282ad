using System.Collections.Concurrent;
using System.Text;
using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Logging;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.EndToEnd;

/// <summary>
/// <see cref="PriorityMessagePump"/> over the Service Bus source, with the real SDK client against the test broker on
/// the real clock, on ONE thread. Only outcomes and orderings are asserted, never durations.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class PumpEndToEndTests(ITestOutputHelper output)
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(2);

    [Fact]
    public async Task CPU_heavy_handlers_on_one_thread_keep_every_lock_through_a_slow_broker_and_complete_each_message_once()
    {
        // 5 s locks: the pump renews 2.5 s before expiry, so a renewal answered 250 ms late still has 2.25 s of
        // margin for the SDK's own thread-pool work on a loaded machine; each message (2 s of CPU, sharing the one
        // thread with up to three others) still outlives its lock.
        var lockDuration = TimeSpan.FromSeconds(5);
        await using var sb = await SbHarness.StartAsync();
        var queue = CreateQueue(sb, count: 6, lockDuration);
        sb.Broker.Faults.RenewLockDelay = TimeSpan.FromMilliseconds(250); // every renewal answers late
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options(lockDuration));
        var deliveries = new ConcurrentBag<int>();

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, ct) =>
            {
                deliveries.Add(context.Message.DeliveryCount);
                for (var i = 0; i < 10; i++)
                {
                    CpuBound.Hold(TimeSpan.FromMilliseconds(200)); // CPU-bound: holds the only thread
                    await Task.Delay(TimeSpan.FromMilliseconds(50), ct);
                }
            },
            () => queue.CompletedCount == 6,
            "six completions",
            new MessagePumpOptions { Name = "sb-cpu", EmptyReceiveDelay = TimeSpan.FromMilliseconds(50), MaxInFlight = 4 });

        output.WriteLine($"pump: {stats}; broker renewals {queue.RenewCount}");
        stats.LeasesLost.Should().Be(0);
        stats.Renewals.Should().BePositive("each message (2 s of CPU, sharing the thread with three others) outlives its 5 s lock");
        // Not "never redelivered": the SDK's receive leaves unused link credit behind (prefetch 0 notwithstanding), so the
        // broker may lock a message into the client's buffer while the pump is at capacity; that lock can run out
        // unseen and the message comes back with DeliveryCount 2. What must hold: no lease the pump held was lost, and
        // every message ends exactly once.
        output.WriteLine($"delivery counts: {string.Join(' ', deliveries.Order())}");
        deliveries.Should().HaveCountGreaterThanOrEqualTo(6);
        AllCompletedOnce(queue, 6);
    }

    [Fact]
    public async Task A_handler_that_throws_abandons_and_the_redelivery_completes_and_a_dead_letter_keeps_its_reason()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = CreateQueue(sb, count: 2);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options());

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, _) =>
            {
                if (context.Message.MessageId == "m0" && context.Message.DeliveryCount == 1)
                {
                    throw new InvalidOperationException("first delivery fails");
                }

                if (context.Message.MessageId == "m1")
                {
                    await context.DeadLetterAsync("poison");
                }
            },
            () => queue.CompletedCount == 1 && queue.DeadLetterCount == 1,
            "m0 completed and m1 dead-lettered");

        stats.Abandoned.Should().Be(1);
        stats.DeadLettered.Should().Be(1);
        queue.CompletionsOf("m0").Should().Be(1);
        queue.DeadLetters.Should().ContainSingle(d => d.MessageId == "m1" && d.Reason == "poison");
        queue.LockedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_renewal_answered_lock_lost_cancels_the_handler_and_the_redelivery_completes_once()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = CreateQueue(sb, count: 1);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options());
        sb.Broker.Faults.FailNextRenewals(1, ServiceBusTestFault.LockLost);
        var canceled = 0;

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, ct) =>
            {
                if (context.Message.DeliveryCount == 1)
                {
                    try
                    {
                        await Task.Delay(Timeout.InfiniteTimeSpan, ct); // until the lease is lost
                    }
                    catch (OperationCanceledException)
                    {
                        Interlocked.Increment(ref canceled);
                        throw;
                    }
                }
            },
            () => queue.CompletedCount == 1,
            "the redelivery's completion");

        stats.LeasesLost.Should().Be(1);
        canceled.Should().Be(1);
        AllCompletedOnce(queue, 1);
    }

    [Fact]
    public async Task A_renewal_that_reaches_the_broker_after_the_lock_ran_out_loses_the_lease_and_the_message_still_ends_once()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = CreateQueue(sb, count: 1);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options());
        sb.Broker.Faults.RenewLockDelay = TimeSpan.FromSeconds(3); // longer than the whole lock: judged expired when answered
        var firstLost = new TaskCompletionSource();

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, ct) =>
            {
                if (context.Message.DeliveryCount == 1)
                {
                    await using var registration = ct.Register(() => firstLost.TrySetResult());
                    await Task.Delay(Timeout.InfiniteTimeSpan, ct);
                }
            },
            () => queue.CompletedCount == 1,
            "the redelivery's completion",
            whileRunning: async _ =>
            {
                await firstLost.Task.WaitAsync(SbHarness.HangBound);
                sb.Broker.Faults.RenewLockDelay = TimeSpan.Zero;
            });

        stats.LeasesLost.Should().BeGreaterThanOrEqualTo(1);
        AllCompletedOnce(queue, 1);
    }

    [Fact]
    public async Task Transient_renewal_failures_are_retried_within_the_lock()
    {
        var lockDuration = TimeSpan.FromSeconds(5); // room for two failed renewals and their retries on a loaded machine
        await using var sb = await SbHarness.StartAsync(maxRetries: 0);
        var queue = CreateQueue(sb, count: 1, lockDuration);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options(lockDuration));
        // Timeouts rather than ServerBusy: after a ServerBusy the SDK itself holds every call of the client back for
        // 10 s, which the lock would not survive; that is the SDK's policy, not a transient failure to retry.
        sb.Broker.Faults.FailNextRenewals(2, ServiceBusTestFault.Timeout);
        var renewedAfterFaults = false;

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, ct) =>
            {
                while (context.RenewalCount < 1)
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(50), ct);
                }

                renewedAfterFaults = true;
            },
            () => queue.CompletedCount == 1,
            "the completion",
            new MessagePumpOptions { Name = "sb-transient", EmptyReceiveDelay = TimeSpan.FromMilliseconds(50), TransientRetryDelay = TimeSpan.FromMilliseconds(100), LeaseKeeper = new() { TransientRetryDelay = TimeSpan.FromMilliseconds(100) } });

        renewedAfterFaults.Should().BeTrue();
        stats.TransientRetries.Should().BeGreaterThanOrEqualTo(2);
        stats.LeasesLost.Should().Be(0);
        AllCompletedOnce(queue, 1);
    }

    [Fact]
    public async Task A_stop_abandons_what_is_in_flight_and_leaves_nothing_locked()
    {
        // Locks of 5 minutes: every lock the broker still shows after the stop must be given back, none can run out
        // while the test waits (its bound is SbHarness.HangBound, one minute).
        var longLock = TimeSpan.FromMinutes(5);
        await using var sb = await SbHarness.StartAsync();
        var queue = CreateQueue(sb, count: 4, lockDuration: longLock);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options(longLock));
        var started = 0;

        var stats = await PumpRun.UntilAsync(
            source,
            async (_, ct) =>
            {
                Interlocked.Increment(ref started);
                await Task.Delay(Timeout.InfiniteTimeSpan, ct); // never finishes on its own
            },
            () => Volatile.Read(ref started) == 4,
            "four handlers running",
            new MessagePumpOptions { Name = "sb-stop", EmptyReceiveDelay = TimeSpan.FromMilliseconds(50), ShutdownTimeout = TimeSpan.FromMilliseconds(200) });

        stats.AbandonedAtStop.Should().Be(4);
        stats.InFlight.Should().Be(0);

        // The 7.x receiver leaves the link credit a receive did not use open (PrefetchCount 0 too), so an abandoned
        // message can be delivered again into the SDK's buffer while no receive waits; the client releases it at once,
        // and the broker puts it back uncounted. Seen once in ten idle runs as 2 locked at the moment of the check.
        await Bounded.UntilAsync(() => Task.FromResult(queue.LockedCount == 0), SbHarness.HangBound, "every lock given back after the stop", TimeSpan.FromMilliseconds(20));
        queue.ActiveCount.Should().Be(4);
        queue.CompletedCount.Should().Be(0);
    }

    [Fact]
    public async Task A_broker_that_goes_away_mid_run_loses_nothing_and_each_message_is_completed_once()
    {
        await using var sb = await SbHarness.StartAsync(maxRetries: 0);
        var queue = CreateQueue(sb, count: 4);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options());
        var inHandler = new TaskCompletionSource();
        var restarted = false;

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, ct) =>
            {
                inHandler.TrySetResult();
                while (!Volatile.Read(ref restarted))
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(50), ct);
                }
            },
            () => queue.CompletedCount >= 4 && queue.LockedCount == 0 && queue.ActiveCount == 0,
            "every message completed after the restart",
            new MessagePumpOptions { Name = "sb-outage", EmptyReceiveDelay = TimeSpan.FromMilliseconds(100), TransientRetryDelay = TimeSpan.FromMilliseconds(200), LeaseKeeper = new() { TransientRetryDelay = TimeSpan.FromMilliseconds(200) } },
            whileRunning: async _ =>
            {
                await inHandler.Task.WaitAsync(SbHarness.HangBound);
                await sb.Broker.StopAsync();
                await Task.Delay(LockDuration * 2); // the locks run out while the broker is away
                await sb.Broker.RestartAsync();
                Volatile.Write(ref restarted, true);
            });

        output.WriteLine($"pump: {stats}");
        AllCompletedOnce(queue, 4);
    }

    [Fact]
    public async Task A_queue_created_after_the_pump_started_is_consumed_after_each_failed_receive_was_logged_once()
    {
        await using var sb = await SbHarness.StartAsync(maxRetries: 0);
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), Options(TimeSpan.FromSeconds(30)));
        var log = new ListLogger();
        ServiceBusTestQueue? queue = null;
        IEnumerable<(EventId EventId, LogLevel Level, string Message, Exception? Exception)> ReceiveFailures() => log.Entries.Where(e => e.EventId.Id == 31);

        var stats = await PumpRun.UntilAsync(
            source,
            (_, _) => Task.CompletedTask,
            () => queue is { CompletedCount: 3 },
            "three completions from the queue created late",
            whileRunning: async _ =>
            {
                await Bounded.UntilAsync(() => Task.FromResult(ReceiveFailures().Any()), SbHarness.HangBound, "a failed receive", TimeSpan.FromMilliseconds(20));
                queue = CreateQueue(sb, count: 3, TimeSpan.FromSeconds(30));
            },
            logger: log);

        output.WriteLine(log.ToString());
        ReceiveFailures().Should().NotBeEmpty().And.OnlyContain(e => e.Exception is InvalidOperationException
            && e.Exception.Message.Contains("queue 'orders'", StringComparison.Ordinal)
            && ((ServiceBusException)e.Exception.InnerException!).Reason == ServiceBusFailureReason.MessagingEntityNotFound);
        source.Fault.Should().BeNull();
        stats.LeasesLost.Should().Be(0);
        AllCompletedOnce(queue!, 3);
    }

    private static ServiceBusTestQueue CreateQueue(SbHarness sb, int count, TimeSpan? lockDuration = null)
    {
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = lockDuration ?? LockDuration, MaxDeliveryCount = 10 });
        for (var i = 0; i < count; i++)
        {
            queue.Send(Encoding.UTF8.GetBytes($"m{i}"), $"m{i}");
        }

        return queue;
    }

    private static ServiceBusSourceOptions Options(TimeSpan? lockDuration = null) => new() { LockDuration = lockDuration ?? LockDuration, MaxWaitTime = TimeSpan.FromMilliseconds(200) };

    private static void AllCompletedOnce(ServiceBusTestQueue queue, int count)
    {
        for (var i = 0; i < count; i++)
        {
            queue.CompletionsOf($"m{i}").Should().Be(1, $"m{i} ends exactly once");
        }

        queue.LockedCount.Should().Be(0);
        queue.ActiveCount.Should().Be(0);
        queue.DeadLetterCount.Should().Be(0);
    }
}
