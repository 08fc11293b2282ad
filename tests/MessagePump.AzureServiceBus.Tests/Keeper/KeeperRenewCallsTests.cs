using System.Diagnostics;
using System.Globalization;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Keeper;

/// <summary>
/// Renew calls of a <see cref="LeaseKeeper"/> against a <see cref="ServiceBusProcessor"/>'s own renewal, same run, on
/// the test broker and the real clock (the processor's renewal loop runs on real timers): two queues with the same
/// messages and lock, each drained by a processor whose handlers hold every message for the whole window, one renewing
/// itself (the SDK's default), one with its renewal off and the keeper. The broker counts the renew calls each queue
/// answered over the window. By default a small run (100 messages, 4 s locks, 8 s); with
/// PRIORITYASYNC_KEEPER_RENEW_MEASURE=1 the figure of docs/keep-your-servicebusprocessor.md (1 000 messages, 30 s
/// locks, 60 s). Only what holds at any load is asserted: every message held to the end and completed once on both
/// queues, no lock lost; the counts are printed.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class KeeperRenewCallsTests(ITestOutputHelper output)
{
    [Fact]
    public async Task Renew_calls_over_the_window_keeper_against_the_processor_s_own_renewal_same_run()
    {
        var full = Environment.GetEnvironmentVariable("PRIORITYASYNC_KEEPER_RENEW_MEASURE") == "1";
        var messages = full ? 1000 : 100;
        var lockDuration = full ? TimeSpan.FromSeconds(30) : TimeSpan.FromSeconds(4);
        var window = full ? TimeSpan.FromSeconds(60) : TimeSpan.FromSeconds(8);

        await using var broker = await ServiceBusTestBroker.StartAsync();
        var own = broker.CreateQueue("own-renewal", new ServiceBusTestEntityOptions { LockDuration = lockDuration });
        var kept = broker.CreateQueue("keeper", new ServiceBusTestEntityOptions { LockDuration = lockDuration });
        for (var i = 0; i < messages; i++)
        {
            var id = i.ToString(CultureInfo.InvariantCulture);
            own.Send("x"u8.ToArray(), id);
            kept.Send("x"u8.ToArray(), id);
        }

        await using var client = new ServiceBusClient(broker.ConnectionString, SbHarness.ClientOptions());
        using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 1 });
        await using var keeper = new LeaseKeeper(scheduler);
        var lostByKeeper = 0;
        keeper.LeaseLost += (_, _) => Interlocked.Increment(ref lostByKeeper);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var heldCount = 0;
        var allHeld = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        void Held()
        {
            if (Interlocked.Increment(ref heldCount) == 2 * messages)
            {
                allHeld.TrySetResult();
            }
        }

        var processorErrors = 0;

        var options = new ServiceBusProcessorOptions { MaxConcurrentCalls = messages, PrefetchCount = 0, AutoCompleteMessages = false, MaxAutoLockRenewalDuration = TimeSpan.FromMinutes(10) };
        await using var renewing = client.CreateProcessor("own-renewal", options);
        renewing.ProcessMessageAsync += async args =>
        {
            Held();
            await release.Task;
            await args.CompleteMessageAsync(args.Message, CancellationToken.None);
        };
        options.MaxAutoLockRenewalDuration = TimeSpan.Zero;
        await using var keeping = client.CreateProcessor("keeper", options);
        keeping.ProcessMessageAsync += async args =>
        {
            using var lease = keeper.Keep(args, keeping);
            Held();
            await release.Task;

            // Through the handle, as docs/keep-your-servicebusprocessor.md says: a complete through the args while the
            // handle is kept is one the keeper cannot see, and a renewal due as it lands is refused and reported lost.
            await lease.CompleteAsync(CancellationToken.None);
        };
        renewing.ProcessErrorAsync += _ => { Interlocked.Increment(ref processorErrors); return Task.CompletedTask; };
        keeping.ProcessErrorAsync += _ => { Interlocked.Increment(ref processorErrors); return Task.CompletedTask; };

        await Task.WhenAll(renewing.StartProcessingAsync(), keeping.StartProcessingAsync());
        await allHeld.Task.WaitAsync(SbHarness.HangBound * 2);
        var ownBefore = own.RenewCount;
        var keptBefore = kept.RenewCount;
        var clock = Stopwatch.StartNew();
        await Task.Delay(window);
        var ownCalls = own.RenewCount - ownBefore;
        var keptCalls = kept.RenewCount - keptBefore;
        var measured = clock.Elapsed;
        var statistics = keeper.GetStatistics();
        release.SetResult();
        await Bounded.UntilAsync(() => Task.FromResult(own.CompletedCount == messages && kept.CompletedCount == messages), SbHarness.HangBound * 2, "every message completed");
        await Task.WhenAll(renewing.StopProcessingAsync(), keeping.StopProcessingAsync());

        output.WriteLine($"{messages} messages held on each queue, {lockDuration.TotalSeconds:0} s locks, over {measured.TotalSeconds:0.0} s (load average {LoadAverage()}):");
        output.WriteLine($"  processor's own renewal (MaxAutoLockRenewalDuration 10 min): {ownCalls} renew calls ({ownCalls / (double)messages:0.00} per message)");
        output.WriteLine($"  LeaseKeeper (processor renewal off):                         {keptCalls} renew calls ({keptCalls / (double)messages:0.00} per message); keeper: {statistics}");
        output.WriteLine($"  processor errors: {processorErrors}; lost by the keeper: {lostByKeeper}");

        lostByKeeper.Should().Be(0);
        statistics.LeasesLost.Should().Be(0);
        for (var i = 0; i < messages; i++)
        {
            var id = i.ToString(CultureInfo.InvariantCulture);
            own.CompletionsOf(id).Should().Be(1);
            kept.CompletionsOf(id).Should().Be(1, "the keeper held message {0} through the window", id);
        }

        own.DeadLetters.Should().BeEmpty();
        kept.DeadLetters.Should().BeEmpty();
        keptCalls.Should().BeGreaterThan(0, "the window is longer than a lock: the keeper renewed");
        ownCalls.Should().BeGreaterThan(0, "the window is longer than a lock: the processor renewed");
    }

    private static string LoadAverage() =>
        File.Exists("/proc/loadavg") ? File.ReadAllText("/proc/loadavg").Split(' ')[0] : "n/a";
}
