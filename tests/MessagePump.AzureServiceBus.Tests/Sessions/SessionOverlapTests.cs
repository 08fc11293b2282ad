using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;
using PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;
using Xunit.Abstractions;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Sessions;

/// <summary>
/// Two hosted pumps on one scheduler, each holding up to three sessions of one queue (the real client against the test
/// broker): a session's messages are never in two handlers at once, through session lock loss and re-acceptance.
/// </summary>
[Collection(RealTimeCollection.Name)]
public sealed class SessionOverlapTests(ITestOutputHelper output)
{
    private static readonly string[] SessionIds = ["a", "b", "c"];

    [Fact]
    public async Task A_session_whose_lock_is_lost_under_a_running_handler_is_not_handled_again_until_that_handler_ends()
    {
        var lockDuration = TimeSpan.FromSeconds(2);
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = lockDuration, RequiresSession = true });
        Send(queue, messagesPerSession: 2);

        // Every session lock is lost at its first renewal, while the first delivery of each session's first message is
        // in a handler that ignores the cancellation and outlives the lock: the broker hands the session to the next
        // acceptor (either pump) at once, with that message again.
        broker.Faults.FailNextRenewals(SessionIds.Length, ServiceBusTestFault.LockLost);
        var detector = new OverlapDetector();
        using var host = BuildHost(broker, lockDuration, async (context, _) =>
        {
            var message = (ServiceBusLeasedMessage)context.Message;
            using (detector.Enter(message.SessionId!, message.MessageId))
            {
                if (message.DeliveryCount == 1 && message.MessageId.EndsWith('0'))
                {
                    await Task.Delay(lockDuration * 1.5, CancellationToken.None);
                }
            }
        });

        await host.StartAsync();
        await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 2 * SessionIds.Length), SbHarness.HangBound, "six completions", TimeSpan.FromMilliseconds(50));
        await host.StopAsync();

        detector.Overlaps.Should().BeEmpty("a session's messages are never in two handlers at once");
        detector.Started.Should().BeGreaterThan(2 * SessionIds.Length, "the lost first deliveries were delivered again");
        foreach (var session in SessionIds)
        {
            queue.CompletionsOf($"{session}0").Should().Be(1);
            queue.CompletionsOf($"{session}1").Should().Be(1);
            detector.OrderOf(session).Where(id => id.EndsWith('1')).Should().ContainSingle("the second message comes once, after the first");
        }

        queue.LockedCount.Should().Be(0);
    }

    /// <summary>
    /// The measured set-up: two hosted pumps, three sessions of ten messages, an 80 ms handler, 5 s session locks. Runs
    /// once, or PRIORITYASYNC_SESSION_RUNS times (the 50-run figure); no overlap and no session lock lost in any run.
    /// </summary>
    [Fact]
    public async Task The_hosted_two_pump_three_session_set_up_has_no_overlap_and_loses_no_session_lock()
    {
        var runs = int.TryParse(Environment.GetEnvironmentVariable("PRIORITYASYNC_SESSION_RUNS"), NumberStyles.Integer, CultureInfo.InvariantCulture, out var n) && n > 0 ? n : 1;
        var overlaps = 0;
        long sessionsLost = 0;
        for (var run = 0; run < runs; run++)
        {
            var lockDuration = TimeSpan.FromSeconds(5);
            await using var broker = await ServiceBusTestBroker.StartAsync();
            var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = lockDuration, RequiresSession = true });
            Send(queue, messagesPerSession: 10);
            var detector = new OverlapDetector();
            using var host = BuildHost(broker, lockDuration, async (context, ct) =>
            {
                var message = (ServiceBusLeasedMessage)context.Message;
                using (detector.Enter(message.SessionId!, message.MessageId))
                {
                    await Task.Delay(TimeSpan.FromMilliseconds(80), ct);
                }
            });

            var clock = Stopwatch.StartNew();
            await host.StartAsync();
            await Bounded.UntilAsync(() => Task.FromResult(queue.CompletedCount == 10 * SessionIds.Length), SbHarness.HangBound, "thirty completions", TimeSpan.FromMilliseconds(20));
            var elapsed = clock.Elapsed;
            var lost = Sources(host).Sum(s => s.SessionsLost);
            await host.StopAsync();

            overlaps += detector.Overlaps.Count;
            sessionsLost += lost;
            output.WriteLine($"run {run + 1}: {elapsed.TotalSeconds:F2} s, {detector.Overlaps.Count} overlaps, {lost} session locks lost, {detector.Started} handler starts");
            foreach (var session in SessionIds)
            {
                detector.OrderOf(session).Should().Equal(Enumerable.Range(0, 10).Select(i => $"{session}{i}"), "each session in order, each message once");
            }
        }

        output.WriteLine($"{runs} runs: {overlaps} overlaps, {sessionsLost} session locks lost");
        overlaps.Should().Be(0);
        sessionsLost.Should().Be(0);
    }

    /// <summary>
    /// 30 messages in 3 sessions with an 80 ms handler, every one completed by the pump over the multi-session source,
    /// by the SDK's ServiceBusSessionProcessor and by ServiceBusPumpSessionProcessor, 3 sessions at once, one call per session, same broker, same run; prints
    /// both times to the thirtieth completion and their ratio (measured, never asserted; the pump's time with its stop too). One round; PRIORITYASYNC_SESSION_THROUGHPUT=N runs N.
    /// </summary>
    [Fact]
    public async Task Session_throughput_against_the_session_processor_both_complete_every_message_and_the_times_are_printed()
    {
        var rounds = int.TryParse(Environment.GetEnvironmentVariable("PRIORITYASYNC_SESSION_THROUGHPUT"), NumberStyles.Integer, CultureInfo.InvariantCulture, out var asked) && asked > 0 ? asked : 1;
        for (var round = 0; round < rounds; round++)
        {
            await using var sb = await SbHarness.StartAsync();
            var lockDuration = TimeSpan.FromSeconds(30);
            var pumpQueue = sb.Broker.CreateQueue("pump", new ServiceBusTestEntityOptions { LockDuration = lockDuration, RequiresSession = true });
            var processorQueue = sb.Broker.CreateQueue("processor", new ServiceBusTestEntityOptions { LockDuration = lockDuration, RequiresSession = true });
            var pumpProcessorQueue = sb.Broker.CreateQueue("pump-processor", new ServiceBusTestEntityOptions { LockDuration = lockDuration, RequiresSession = true });
            Send(pumpQueue, messagesPerSession: 10);
            Send(processorQueue, messagesPerSession: 10);
            Send(pumpProcessorQueue, messagesPerSession: 10);

            var pumpClock = Stopwatch.StartNew();
            TimeSpan? pumpHandled = null;
            await using (var source = await sb.Transport.OpenSessionsAsync(ServiceBusEntity.Queue("pump"), maxConcurrentSessions: 3, new ServiceBusSourceOptions { LockDuration = lockDuration, MaxWaitTime = TimeSpan.FromSeconds(1) }))
            {
                await PumpRun.UntilAsync(
                    source,
                    (_, ct) => Task.Delay(TimeSpan.FromMilliseconds(80), ct),
                    () =>
                    {
                        // The time to the thirtieth completion, as the processor's below; the stop and the source's
                        // disposal (which waits for the receives still open on its sessions) are printed apart.
                        if (pumpQueue.CompletedCount == 30)
                        {
                            pumpHandled ??= pumpClock.Elapsed;
                        }

                        return pumpHandled is not null;
                    },
                    "thirty completions",
                    new MessagePumpOptions { Name = "sessions", MaxInFlight = 3, EmptyReceiveDelay = TimeSpan.FromMilliseconds(50) });
            }

            var pumpWithStop = pumpClock.Elapsed;
            var pumpTime = pumpHandled!.Value;

            await using var client = new ServiceBusClient(sb.Broker.ConnectionString, TestBrokerHarness<TimeProvider>.ClientOptions());
            await using var processor = client.CreateSessionProcessor("processor", new ServiceBusSessionProcessorOptions
            {
                MaxConcurrentSessions = 3,
                MaxConcurrentCallsPerSession = 1,
                SessionIdleTimeout = TimeSpan.FromSeconds(1),
            });
            processor.ProcessMessageAsync += _ => Task.Delay(TimeSpan.FromMilliseconds(80));
            processor.ProcessErrorAsync += _ => Task.CompletedTask;
            var processorClock = Stopwatch.StartNew();
            await processor.StartProcessingAsync();
            await Bounded.UntilAsync(() => Task.FromResult(processorQueue.CompletedCount == 30), SbHarness.HangBound, "thirty processor completions", TimeSpan.FromMilliseconds(10));
            var processorTime = processorClock.Elapsed;
            await processor.StopProcessingAsync();

            // ServiceBusPumpSessionProcessor, the session processor's counterpart, with the same options.
            await using var pumpProcessor = client.CreatePumpSessionProcessor("pump-processor", new ServiceBusPumpSessionProcessorOptions
            {
                MaxConcurrentSessions = 3,
                MaxConcurrentCallsPerSession = 1,
                SessionIdleTimeout = TimeSpan.FromSeconds(1),
            });
            pumpProcessor.ProcessMessageAsync += _ => Task.Delay(TimeSpan.FromMilliseconds(80));
            pumpProcessor.ProcessErrorAsync += _ => Task.CompletedTask;
            var pumpProcessorClock = Stopwatch.StartNew();
            await pumpProcessor.StartProcessingAsync();
            await Bounded.UntilAsync(() => Task.FromResult(pumpProcessorQueue.CompletedCount == 30), SbHarness.HangBound, "thirty pump session processor completions", TimeSpan.FromMilliseconds(10));
            var pumpProcessorTime = pumpProcessorClock.Elapsed;
            await pumpProcessor.StopProcessingAsync();

            output.WriteLine($"round {round + 1}: pump {pumpTime.TotalSeconds:F2} s ({pumpWithStop.TotalSeconds:F2} s with its stop), ServiceBusSessionProcessor {processorTime.TotalSeconds:F2} s, ratio {pumpTime / processorTime:F2}; ServiceBusPumpSessionProcessor {pumpProcessorTime.TotalSeconds:F2} s, ratio {pumpProcessorTime / processorTime:F2}");
        }
    }

    private static void Send(ServiceBusTestQueue queue, int messagesPerSession)
    {
        for (var i = 0; i < messagesPerSession; i++)
        {
            foreach (var session in SessionIds)
            {
                queue.Send(Encoding.UTF8.GetBytes($"{session}{i}"), $"{session}{i}", sessionId: session);
            }
        }
    }

    private static IHost BuildHost(ServiceBusTestBroker broker, TimeSpan lockDuration, Func<MessageContext, CancellationToken, Task> handler)
    {
        var builder = Host.CreateApplicationBuilder();
        builder.Services.AddPriorityScheduler();
        foreach (var name in new[] { "one", "two" })
        {
            builder.Services
                .AddServiceBusMessagePump(name, settings =>
                {
                    settings.ConnectionString = broker.ConnectionString;
                    settings.QueueName = "orders";
                    settings.Source.LockDuration = lockDuration;
                    settings.Source.MaxWaitTime = TimeSpan.FromMilliseconds(300);
                    settings.MaxConcurrentSessions = SessionIds.Length;
                })
                .Configure(options =>
                {
                    options.EmptyReceiveDelay = TimeSpan.FromMilliseconds(50);
                    options.ShutdownTimeout = TimeSpan.FromSeconds(10);
                })
                .WithHandler(handler);
        }

        return builder.Build();
    }

    private static IEnumerable<ServiceBusMultiSessionSource> Sources(IHost host) =>
        new[] { "one", "two" }.Select(name => (ServiceBusMultiSessionSource)host.Services.GetRequiredKeyedService<IMessageSource>($"PriorityAsync.MessagePump.AzureServiceBus:{name}"));

    /// <summary>Records every handler start per session, and each start that found another handler of its session running.</summary>
    private sealed class OverlapDetector
    {
        private readonly ConcurrentDictionary<string, int> _running = new(StringComparer.Ordinal);
        private readonly ConcurrentDictionary<string, ConcurrentQueue<string>> _order = new(StringComparer.Ordinal);
        private readonly ConcurrentQueue<string> _overlaps = new();
        private int _started;

        public IReadOnlyCollection<string> Overlaps => _overlaps;

        public int Started => Volatile.Read(ref _started);

        public IReadOnlyCollection<string> OrderOf(string session) => _order.TryGetValue(session, out var order) ? order : [];

        public IDisposable Enter(string session, string messageId)
        {
            Interlocked.Increment(ref _started);
            _order.GetOrAdd(session, _ => new ConcurrentQueue<string>()).Enqueue(messageId);
            if (_running.AddOrUpdate(session, 1, (_, running) => running + 1) > 1)
            {
                _overlaps.Enqueue($"{messageId} started while another handler of session '{session}' ran");
            }

            return new Exit(this, session);
        }

        private sealed class Exit(OverlapDetector detector, string session) : IDisposable
        {
            public void Dispose() => detector._running.AddOrUpdate(session, 0, (_, running) => running - 1);
        }
    }
}
