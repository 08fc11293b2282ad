using Xunit.Abstractions;
using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Text;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Processor;

/// <summary>
/// What users see is what the broker saw: a consumer's statistics and metrics on a mixed workload (complete, abandon,
/// a handler that throws until the broker dead-letters its message, dead-letter with reason and description, defer,
/// a lock lost) held against the test broker's own counts, cell by cell; for the processor-shaped API (with its
/// deferred messages received and handled again) and for a bare pump on the Service Bus transport.
/// </summary>
public sealed class MixedWorkloadTests(ITestOutputHelper output)
{
    private static readonly TimeSpan LockDuration = TimeSpan.FromSeconds(1.5);

    // l0 comes last: while its handler waits out its lock, no message behind it can sit in the client's buffer.
    private static readonly string[] Ids = ["c0", "a0", "t0", "p0", "f0", "c1", "c2", "c3", "l0"];

    [Fact]
    public async Task Every_count_of_the_processor_equals_the_brokers_on_a_mixed_workload()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = CreateQueue(sb);
        var identifier = "mixed-processor-" + Guid.NewGuid().ToString("N");
        var measured = new ConcurrentDictionary<string, long>(StringComparer.Ordinal);
        using var listener = Listen(identifier, measured);
        var visits = new ConcurrentDictionary<string, int>(StringComparer.Ordinal);
        var errors = new ConcurrentQueue<ProcessErrorEventArgs>();
        long deferredSequence = -1;
        await using var processor = new ServiceBusPumpProcessor(sb.Transport, "orders", new ServiceBusPumpProcessorOptions { MaxConcurrentCalls = 1, Identifier = identifier });
        processor.ProcessErrorAsync += args =>
        {
            errors.Enqueue(args);
            return Task.CompletedTask;
        };
        processor.ProcessMessageAsync += args => HandleAsync(args, sb, visits, sequence => Volatile.Write(ref deferredSequence, sequence));

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(() => Volatile.Read(ref deferredSequence) >= 0 && queue.DeferredCount == 1, "the deferral of f0");
        var deferred = queue.DeferredCount;
        await processor.ProcessDeferredMessagesAsync([Volatile.Read(ref deferredSequence)]);
        await UntilAllEndedAsync(queue);
        await processor.StopProcessingAsync();
        var stats = processor.GetStatistics()!;

        AssertMatches(queue, stats, measured, visits, deferred);
        queue.CompletionsOf("f0").Should().Be(1, "the deferred message, received again, is completed once");
        errors.Count(e => e.ErrorSource == ServiceBusErrorSource.ProcessMessageCallback).Should().Be(visits["t0"]);
        errors.Count(e => e.ErrorSource == ServiceBusErrorSource.RenewLock).Should().Be(1, "the lost lock of l0 is reported once");
    }

    [Fact]
    public async Task Every_count_of_a_bare_pump_equals_the_brokers_on_a_mixed_workload()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = CreateQueue(sb);
        var name = "mixed-pump-" + Guid.NewGuid().ToString("N");
        var measured = new ConcurrentDictionary<string, long>(StringComparer.Ordinal);
        using var listener = Listen(name, measured);
        var visits = new ConcurrentDictionary<string, int>(StringComparer.Ordinal);
        var deferred = 0;
        await using var source = await sb.Transport.OpenAsync(ServiceBusEntity.Queue("orders"), new ServiceBusSourceOptions { LockDuration = LockDuration, MaxWaitTime = TimeSpan.FromMilliseconds(200) });

        var stats = await PumpRun.UntilAsync(
            source,
            async (context, cancellationToken) =>
            {
                var id = context.Message.MessageId;
                var visit = visits.AddOrUpdate(id, 1, (_, n) => n + 1);
                switch (id)
                {
                    case "a0" when visit == 1:
                        await context.AbandonAsync();
                        break;
                    case "t0":
                        throw new InvalidOperationException("t0 cannot be processed");
                    case "p0":
                        await context.DeadLetterAsync("Poison", "bad body");
                        break;
                    case "f0":
                        await context.SettleAsync(MessageSettlement.Defer());
                        Volatile.Write(ref deferred, queue.DeferredCount);
                        break;
                    case "l0" when visit == 1:
                        await LoseTheLockAsync(sb, cancellationToken);
                        break;
                    default:
                        break; // completed when the handler returns
                }
            },
            () => queue.CompletedCount == 6 && queue.DeadLetterCount == 2 && queue.RefusedRenewCount == 1 && queue.LockedCount == 0,
            "six completions, two dead letters and the refused renewal of l0",
            new MessagePumpOptions { Name = name, MaxInFlight = 1, EmptyReceiveDelay = TimeSpan.FromMilliseconds(50) });

        AssertMatches(queue, stats, measured, visits, Volatile.Read(ref deferred));
        queue.DeferredCount.Should().Be(1, "f0 stays deferred: a bare pump's user receives it with the SDK");
    }

    [Fact]
    public async Task Every_count_of_the_session_processor_equals_the_brokers_on_a_mixed_workload()
    {
        await using var sb = await SbHarness.StartAsync();
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration, RequiresSession = true, MaxDeliveryCount = 3 });
        foreach (var id in Ids.Where(id => id != "f0")) // a session processor has no deferred receive of its own
        {
            queue.Send(Encoding.UTF8.GetBytes(id), id, sessionId: id == "l0" ? "lost" : "s");
        }

        var identifier = "mixed-sessions-" + Guid.NewGuid().ToString("N");
        var measured = new ConcurrentDictionary<string, long>(StringComparer.Ordinal);
        using var listener = Listen(identifier, measured);
        var visits = new ConcurrentDictionary<string, int>(StringComparer.Ordinal);
        var errors = new ConcurrentQueue<ProcessErrorEventArgs>();
        await using var client = new ServiceBusClient(sb.Broker.ConnectionString, TestBrokerHarness<TimeProvider>.ClientOptions());
        await using var processor = client.CreatePumpSessionProcessor("orders", new ServiceBusPumpSessionProcessorOptions
        {
            MaxConcurrentSessions = 1,
            SessionIdleTimeout = TimeSpan.FromMilliseconds(500),
            Identifier = identifier,
        });
        processor.ProcessErrorAsync += args =>
        {
            errors.Enqueue(args);
            return Task.CompletedTask;
        };
        processor.ProcessMessageAsync += args => HandleAsync(args, sb, visits, deferred: null); // no f0 is sent: it never defers

        await processor.StartProcessingAsync();
        await ProcessorHarness.UntilAsync(
            () => queue.CompletedCount == 6 && queue.DeadLetterCount == 2 && queue.RefusedRenewCount >= 1 && queue.LockedCount == 0 && visits.GetValueOrDefault("l0") == 2,
            "six completions, two dead letters, the refused session renewal and l0 handled again");
        await processor.StopProcessingAsync();
        var stats = processor.GetStatistics()!;

        AssertMatches(queue, stats, measured, visits, deferred: 0);
        errors.Count(e => e.ErrorSource == ServiceBusErrorSource.ProcessMessageCallback).Should().Be(visits["t0"]);
    }

    /// <summary>
    /// The processor-shaped handler of the workload (the session processor's arguments derive from the processor's):
    /// each message by its id, counted per visit; <paramref name="deferred"/> is told the sequence number of the
    /// message it defers.
    /// </summary>
    private static async Task HandleAsync(ServiceBusPumpMessageEventArgs args, SbHarness sb, ConcurrentDictionary<string, int> visits, Action<long>? deferred)
    {
        var message = args.Message;
        var visit = visits.AddOrUpdate(message.MessageId, 1, (_, n) => n + 1);
        switch (message.MessageId)
        {
            case "a0" when visit == 1:
                await args.AbandonMessageAsync(message);
                break;
            case "t0":
                throw new InvalidOperationException("t0 cannot be processed");
            case "p0":
                await args.DeadLetterMessageAsync(message, "Poison", "bad body");
                break;
            case "f0" when visit == 1:
                await args.DeferMessageAsync(message);
                deferred?.Invoke(message.SequenceNumber);
                break;
            case "l0" when visit == 1:
                await LoseTheLockAsync(sb, args.CancellationToken); // a session's: the session lock's renewals come too late
                break;
            default:
                break; // completed when the handler returns
        }
    }

    private static ServiceBusTestQueue CreateQueue(SbHarness sb)
    {
        var queue = sb.Broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = LockDuration, MaxDeliveryCount = 3 });
        foreach (var id in Ids)
        {
            queue.Send(Encoding.UTF8.GetBytes(id), id);
        }

        return queue;
    }

    /// <summary>
    /// Every renewal of the lock is answered after the lock has run out, so the broker refuses it (a genuine lock-lost
    /// answer, counted in <see cref="ServiceBusTestQueue.RefusedRenewCount"/>); the keeper reports the lock lost, which
    /// cancels the handler's token; renewals are answered at once again from then on.
    /// </summary>
    private static async Task LoseTheLockAsync(SbHarness sb, CancellationToken handlerToken)
    {
        sb.Broker.Faults.RenewLockDelay = LockDuration * 3;
        try
        {
            await Task.Delay(Timeout.InfiniteTimeSpan, handlerToken);
        }
        catch (OperationCanceledException)
        {
            sb.Broker.Faults.RenewLockDelay = TimeSpan.Zero;
        }
    }

    private static Task UntilAllEndedAsync(ServiceBusTestQueue queue) =>
        ProcessorHarness.UntilAsync(
            () => queue.CompletedCount == 7 && queue.DeadLetterCount == 2 && queue.RefusedRenewCount == 1 && queue.LockedCount == 0,
            "seven completions, two dead letters and the refused renewal of l0");

    private void AssertMatches(ServiceBusTestQueue queue, MessagePumpStatistics stats, ConcurrentDictionary<string, long> measured, ConcurrentDictionary<string, int> visits, int deferred)
    {
        // The broker's own counts, beside the consumer's statistics and its metrics (tag messagepump.name).
        var table = new (string What, long Broker, long Statistic, long Metric)[]
        {
            ("received", visits.Values.Sum(), stats.Received, Measured(measured, MessagePumpMetrics.ConsumedMessagesName)),
            ("completed", queue.CompletedCount, stats.Completed, Measured(measured, MessagePumpMetrics.CompletedMessagesName)),
            ("abandoned", queue.AbandonedCount, stats.Abandoned, Measured(measured, MessagePumpMetrics.AbandonedMessagesName)),
            ("dead-lettered by the handler", queue.DeadLetters.Count(d => d.Reason == "Poison"), stats.DeadLettered, Measured(measured, MessagePumpMetrics.DeadLetteredMessagesName)),
            ("deferred", deferred, stats.Deferred, Measured(measured, MessagePumpMetrics.DeferredMessagesName)),
            ("locks lost (renewals refused)", queue.RefusedRenewCount, stats.LeasesLost, Measured(measured, MessagePumpMetrics.LeasesLostName)),
        };
        output.WriteLine("| count | broker | statistics | metric |");
        output.WriteLine("|---|---:|---:|---:|");
        foreach (var (what, broker, statistic, metric) in table)
        {
            output.WriteLine($"| {what} | {broker} | {statistic} | {metric} |");
        }

        foreach (var (what, broker, statistic, metric) in table)
        {
            statistic.Should().Be(broker, $"the statistics count {what} as the broker does");
            metric.Should().Be(broker, $"the metric counts {what} as the broker does");
        }

        stats.HandlerFailures.Should().Be(visits["t0"], "t0 threw on each of its deliveries");
        stats.LeasesLost.Should().Be(1);
        queue.DeadLetters.Select(d => d.Reason).Should().BeEquivalentTo("Poison", "MaxDeliveryCountExceeded");
        queue.DeadLetters.Single(d => d.Reason == "Poison").Description.Should().Be("bad body");
        queue.CompletionsOf("l0").Should().Be(1, "the message whose lock was lost comes back and is completed once");
        queue.CompletionsOf("a0").Should().Be(1);
        stats.InFlight.Should().Be(0);
    }

    private static long Measured(ConcurrentDictionary<string, long> measured, string name) => measured.GetValueOrDefault(name);

    private static MeterListener Listen(string pump, ConcurrentDictionary<string, long> measured)
    {
        var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == MessagePumpDiagnostics.MeterName)
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == MessagePumpDiagnostics.PumpTag && Equals(tag.Value, pump))
                {
                    measured.AddOrUpdate(instrument.Name, value, (_, sum) => sum + value);
                    return;
                }
            }
        });
        listener.Start();
        return listener;
    }
}
