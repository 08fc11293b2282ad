using System.Diagnostics;
using System.Globalization;
using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.AzureServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;

namespace PriorityAsync.Benchmarks.LeaseLoads;

/// <summary>
/// The lease loads users run, on the in-process Service Bus test broker through the real client, each consumer in a
/// fresh broker under the same pool load: the library's processor or session processor beside the SDK's.
/// </summary>
/// <remarks>
/// Usage: <c>lease-loads &lt;sessions-starved | processor-starved | servicebusy&gt; [--consumer ours|sdk|both] [--starve queued|busy]</c>.
/// The starved loads' blockers are counted while they wait in the pool's queue (<c>queued</c>, the default: four always
/// wait ahead of any other work item) or while they wait or run (<c>busy</c>: every thread busy, the queue short); see
/// <see cref="PoolStarvation"/>.
/// <list type="bullet">
/// <item><c>sessions-starved</c>: pool capped at 4 threads with 4 items blocking 1 s always queued; a session queue with
/// 5 s locks; 6 sessions × 8 messages, 3 sessions at once; handlers burn 3 × 150 ms of CPU with
/// <see cref="PriorityScheduler.YieldIfNeeded()"/> between chunks (<see cref="Task.Yield"/> on the SDK's, outside any
/// scheduler), await 200 ms, and every fourth message awaits 3 s
/// more; each session's last message is sent 6 s after its seventh was handled, so a held session idles longer than its
/// lock (idle timeout 10 s). At most 200 s.</item>
/// <item><c>processor-starved</c>: the same pool load; 50 messages, 5 s locks, <c>MaxConcurrentCalls</c> 8, handlers of
/// 250 ms CPU + 50 ms + 450 ms CPU + 50 ms.</item>
/// <item><c>kept-processor</c>: the SDK's <see cref="ServiceBusProcessor"/> on a topic subscription with 3 s locks,
/// kept by a <see cref="LeaseKeeper"/> as docs/keep-your-servicebusprocessor.md shows ("ours"; the SDK's own renewal
/// for "sdk"); handlers of 30 CPU chunks of 150–200 ms between 15 ms awaits on the keeper's token. Starved (the
/// default): <c>MaxConcurrentCalls</c> 4, 16 messages, the pool capped at 6 threads with 12 items blocking 300 ms;
/// <c>--healthy</c>: <c>MaxConcurrentCalls</c> 24, 24 messages, the pool as it is.</item>
/// <item><c>servicebusy</c>: a healthy pool; the broker answers the first 3 renewals <c>ServerBusy</c>; 4 messages whose
/// handlers take 6 s (a delay on the handler's token), 4 s locks.</item>
/// </list>
/// Renewals per lock duration: the broker's renew calls over the time held (sessions: from each acceptance's
/// initializing event to its closing event; messages: from the broker's lock, read at the hand-off, to the handler's end)
/// divided by the lock duration. Refused
/// renewals: those the broker answered lock-lost for a lock no longer held (settled or gone), faults excluded.
/// </remarks>
internal static class LeaseLoadsHarness
{
    /// <summary>Whether the starved loads count their blockers while they run too (<c>--starve busy</c>) or only while they wait (the default).</summary>
    private static bool Outstanding { get; set; }

    public static int Run(string[] args)
    {
        if (args.Length == 0)
        {
            Console.Error.WriteLine("usage: lease-loads <sessions-starved|processor-starved|servicebusy|kept-processor [--healthy]> [--consumer ours|sdk|both]");
            return 2;
        }

        var load = args[0];
        var starveIndex = Array.IndexOf(args, "--starve");
        Outstanding = starveIndex >= 0 && starveIndex + 1 < args.Length && args[starveIndex + 1] == "busy";
        var consumerIndex = Array.IndexOf(args, "--consumer");
        var consumers = consumerIndex >= 0 && consumerIndex + 1 < args.Length ? args[consumerIndex + 1] : "both";
        var sides = consumers switch
        {
            "both" => new[] { "ours", "sdk" },
            "ours" or "sdk" => [consumers],
            _ => throw new ArgumentException($"--consumer is ours, sdk or both, not '{consumers}'.", nameof(args)),
        };
        Console.WriteLine($"lease-loads {load}{(load.EndsWith("-starved", StringComparison.Ordinal) ? $" (blockers counted while {(Outstanding ? "queued or running" : "queued")})" : string.Empty)}: {Environment.ProcessorCount} cores, .NET {Environment.Version}, {DateTime.UtcNow:yyyy-MM-dd HH:mm} UTC");
        foreach (var side in sides)
        {
            var ours = side == "ours";
            var line = load switch
            {
                "sessions-starved" => SessionsStarvedAsync(ours).GetAwaiter().GetResult(),
                "processor-starved" => ProcessorStarvedAsync(ours).GetAwaiter().GetResult(),
                "servicebusy" => ServiceBusyAsync(ours).GetAwaiter().GetResult(),
                "kept-processor" => KeptProcessorAsync(ours, starved: !args.Contains("--healthy")).GetAwaiter().GetResult(),
                _ => throw new ArgumentException($"No load named '{load}'.", nameof(args)),
            };
            Console.WriteLine($"  {(ours ? "ours" : "SDK "),-4} {line}");
        }

        return 0;
    }

    private static void Burn(TimeSpan cpu)
    {
        var until = Stopwatch.GetTimestamp() + (long)(cpu.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < until)
        {
            Thread.SpinWait(200);
        }
    }

    private static async Task<string> SessionsStarvedAsync(bool ours)
    {
        const int Sessions = 6;
        const int PerSession = 8;
        var lockDuration = TimeSpan.FromSeconds(5);
        var idleTimeout = TimeSpan.FromSeconds(10);
        var lastMessageGap = TimeSpan.FromSeconds(6);
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = broker.CreateQueue("sessions", new ServiceBusTestEntityOptions { RequiresSession = true, LockDuration = lockDuration });
        for (var session = 0; session < Sessions; session++)
        {
            for (var message = 0; message < PerSession - 1; message++)
            {
                queue.Send("work"u8.ToArray(), $"s{session}-m{message}", $"s{session}");
            }
        }

        var recorder = new LoadRecorder();
        using var sender = new DelayedSender(queue);
        await using var client = new ServiceBusClient(broker.ConnectionString);
        using var starvation = new PoolStarvation(threads: 4, queued: 4, TimeSpan.FromSeconds(1), Outstanding);
        var started = Stopwatch.GetTimestamp();

        async Task HandleAsync(ServiceBusReceivedMessage message, DateTimeOffset sessionLockedUntil, CancellationToken cancellationToken)
        {
            // The time held is the sessions' (their events), not the messages'; the lock is the session's.
            _ = recorder.HandlerStarted(message.MessageId, sessionLockedUntil, lockDuration);
            try
            {
                for (var chunk = 0; chunk < 3; chunk++)
                {
                    Burn(TimeSpan.FromMilliseconds(150));
                    if (PriorityScheduler.Current is null)
                    {
                        await Task.Yield(); // the SDK's handlers run outside any PriorityAsync scheduler, where YieldIfNeeded throws
                    }
                    else
                    {
                        await PriorityScheduler.YieldIfNeeded();
                    }
                }

                await Task.Delay(200, cancellationToken);
                var index = int.Parse(message.MessageId.AsSpan(message.MessageId.IndexOf('m', StringComparison.Ordinal) + 1), CultureInfo.InvariantCulture);
                if (index % 4 == 3)
                {
                    await Task.Delay(3000, cancellationToken);
                }

                if (index == PerSession - 2)
                {
                    sender.SendLater(lastMessageGap, $"{message.SessionId}-m{PerSession - 1}", message.SessionId);
                }
            }
            catch (OperationCanceledException)
            {
                recorder.HandlerCanceled();
                throw;
            }
            finally
            {
                LoadLog.Event($"handler of {message.MessageId} ends");
            }
        }

        var total = Sessions * PerSession;
        var deadline = TimeSpan.FromSeconds(200);
        string extra;
        if (ours)
        {
            await using var processor = client.CreatePumpSessionProcessor("sessions", new ServiceBusPumpSessionProcessorOptions
            {
                MaxConcurrentSessions = 3,
                SessionIdleTimeout = idleTimeout,
                LockDuration = lockDuration,
                Logger = LoadLog.FromArguments(),
            });
            processor.SessionInitializingAsync += args => { recorder.SessionOpened(args.SessionId); return Task.CompletedTask; };
            processor.SessionClosingAsync += args => { recorder.SessionClosed(args.SessionId); return Task.CompletedTask; };
            processor.ProcessMessageAsync += args => HandleAsync(args.Message, args.SessionLockedUntil, args.CancellationToken);
            processor.ProcessErrorAsync += args => { recorder.Error(args.ErrorSource, args.Exception); return Task.CompletedTask; };
            await processor.StartProcessingAsync();
            await WaitSettledAsync(queue, total, deadline);
            await processor.StopProcessingAsync();
            var statistics = processor.GetStatistics();
            extra = $"; statistics: LeasesLost {statistics?.LeasesLost}, ExpiredAtHandOff {statistics?.ExpiredAtHandOff}, least hand-off headroom {statistics?.MinHandOffHeadroom?.TotalMilliseconds:0} ms";
        }
        else
        {
            await using var processor = client.CreateSessionProcessor("sessions", new ServiceBusSessionProcessorOptions
            {
                MaxConcurrentSessions = 3,
                SessionIdleTimeout = idleTimeout,
            });
            processor.SessionInitializingAsync += args => { recorder.SessionOpened(args.SessionId); return Task.CompletedTask; };
            processor.SessionClosingAsync += args => { recorder.SessionClosed(args.SessionId); return Task.CompletedTask; };
            processor.ProcessMessageAsync += args => HandleAsync(args.Message, args.SessionLockedUntil, args.CancellationToken);
            processor.ProcessErrorAsync += args => { recorder.Error(args.ErrorSource, args.Exception); return Task.CompletedTask; };
            await processor.StartProcessingAsync();
            await WaitSettledAsync(queue, total, deadline);
            await processor.StopProcessingAsync();
            extra = string.Empty;
        }

        recorder.CloseOpenSessions();
        var elapsed = Stopwatch.GetElapsedTime(started);
        var perLock = queue.RenewCount / (recorder.Held / lockDuration);
        return string.Create(CultureInfo.InvariantCulture,
            $"completed {queue.CompletedCount}/{total}, dead-lettered {queue.DeadLetterCount}, redeliveries {recorder.Redeliveries}, in {elapsed.TotalSeconds:0} s; renew calls {queue.RenewCount} ({perLock:0.00} per lock duration held, {recorder.Held.TotalSeconds:0} s held), refused {queue.RefusedRenewCount}; session lock lost reported {recorder.ErrorsWith(ServiceBusFailureReason.SessionLockLost)}, handlers canceled {recorder.Canceled}; hand-off headroom {recorder.Headroom()}; errors {recorder.DescribeErrors()}{extra}");
    }

    private static async Task<string> ProcessorStarvedAsync(bool ours)
    {
        const int Messages = 50;
        var lockDuration = TimeSpan.FromSeconds(5);
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = FilledQueue(broker, Messages, lockDuration);

        var recorder = new LoadRecorder();
        await using var client = new ServiceBusClient(broker.ConnectionString);
        using var starvation = new PoolStarvation(threads: 4, queued: 4, TimeSpan.FromSeconds(1), Outstanding);
        var started = Stopwatch.GetTimestamp();

        Task HandleAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken) => RecordedAsync(recorder, message, lockDuration, async () =>
        {
            Burn(TimeSpan.FromMilliseconds(250));
            await Task.Delay(50, cancellationToken);
            Burn(TimeSpan.FromMilliseconds(450));
            await Task.Delay(50, cancellationToken);
        });

        var extra = await RunProcessorAsync(client, ours, queue, recorder, HandleAsync, Messages, lockDuration, maxConcurrentCalls: 8, TimeSpan.FromSeconds(300));
        var elapsed = Stopwatch.GetElapsedTime(started);
        return Describe(queue, recorder, Messages, lockDuration, elapsed, extra);
    }

    private static async Task<string> ServiceBusyAsync(bool ours)
    {
        const int Messages = 4;
        var lockDuration = TimeSpan.FromSeconds(4);
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var queue = FilledQueue(broker, Messages, lockDuration);

        broker.Faults.FailNextRenewals(3, ServiceBusTestFault.ServerBusy);
        var recorder = new LoadRecorder();
        await using var client = new ServiceBusClient(broker.ConnectionString);
        var started = Stopwatch.GetTimestamp();

        Task HandleAsync(ServiceBusReceivedMessage message, CancellationToken cancellationToken) =>
            RecordedAsync(recorder, message, lockDuration, () => Task.Delay(TimeSpan.FromSeconds(6), cancellationToken));

        var extra = await RunProcessorAsync(client, ours, queue, recorder, HandleAsync, Messages, lockDuration, maxConcurrentCalls: 4, TimeSpan.FromSeconds(120));
        var elapsed = Stopwatch.GetElapsedTime(started);
        return Describe(queue, recorder, Messages, lockDuration, elapsed, extra);
    }

    private static async Task<string> KeptProcessorAsync(bool ours, bool starved)
    {
        var messages = starved ? 16 : 24;
        var concurrency = starved ? 4 : 24;
        var lockDuration = TimeSpan.FromSeconds(3);
        await using var broker = await ServiceBusTestBroker.StartAsync();
        var topic = broker.CreateTopic("orders");
        var subscription = topic.CreateSubscription("billing", new ServiceBusTestEntityOptions { LockDuration = lockDuration });
        await using var client = new ServiceBusClient(broker.ConnectionString);
        await using (var sender = client.CreateSender("orders"))
        {
            for (var i = 0; i < messages; i++)
            {
                await sender.SendMessageAsync(new ServiceBusMessage("work") { MessageId = $"m{i}" });
            }
        }

        var recorder = new LoadRecorder();
        using var starvation = starved ? new PoolStarvation(threads: 6, queued: 12, TimeSpan.FromMilliseconds(300), Outstanding) : null;
        using var scheduler = new PriorityTaskScheduler();
        await using var keeper = new LeaseKeeper(scheduler, logger: LoadLog.FromArguments());
        var random = new Random(7);
        var started = Stopwatch.GetTimestamp();
        await using var processor = client.CreateProcessor("orders", "billing", new ServiceBusProcessorOptions
        {
            MaxConcurrentCalls = concurrency,
            MaxAutoLockRenewalDuration = ours ? TimeSpan.Zero : TimeSpan.FromMinutes(5),
        });
        processor.ProcessMessageAsync += args => RecordedAsync(recorder, args.Message, lockDuration, async () =>
        {
            using var lease = ours ? keeper.Keep(args, processor) : null;
            var token = lease?.LeaseLostToken ?? args.CancellationToken;
            for (var chunk = 0; chunk < 30; chunk++)
            {
                int cpu;
                lock (random)
                {
                    cpu = random.Next(150, 201);
                }

                Burn(TimeSpan.FromMilliseconds(cpu));
                await Task.Delay(15, token);
            }
        });
        processor.ProcessErrorAsync += args => { recorder.Error(args.ErrorSource, args.Exception); return Task.CompletedTask; };
        await processor.StartProcessingAsync();
        await WaitSettledAsync(subscription, messages, TimeSpan.FromSeconds(300));
        await processor.StopProcessingAsync();
        var elapsed = Stopwatch.GetElapsedTime(started);
        var statistics = keeper.GetStatistics();
        return Describe(subscription, recorder, messages, lockDuration, elapsed, ours ? $"; keeper: LeasesLost {statistics.LeasesLost}, Renewals {statistics.Renewals}, RenewCalls {statistics.RenewCalls}" : string.Empty)
            + (starved ? $" ({starvation!.Describe()})" : " (healthy pool)");
    }

    /// <summary>A queue with <paramref name="messages"/> messages, <c>m0</c> on.</summary>
    private static ServiceBusTestQueue FilledQueue(ServiceBusTestBroker broker, int messages, TimeSpan lockDuration)
    {
        var queue = broker.CreateQueue("orders", new ServiceBusTestEntityOptions { LockDuration = lockDuration });
        for (var i = 0; i < messages; i++)
        {
            queue.Send("work"u8.ToArray(), $"m{i}");
        }

        return queue;
    }

    /// <summary>Runs a processor handler's work, recording its start, its end and a cancellation it saw.</summary>
    private static async Task RecordedAsync(LoadRecorder recorder, ServiceBusReceivedMessage message, TimeSpan lockDuration, Func<Task> work)
    {
        var startedAt = recorder.HandlerStarted(message.MessageId, message.LockedUntil, lockDuration);
        try
        {
            await work();
        }
        catch (OperationCanceledException)
        {
            recorder.HandlerCanceled();
            throw;
        }
        finally
        {
            recorder.HandlerEnded(startedAt);
        }
    }

    private static async Task<string> RunProcessorAsync(
        ServiceBusClient client,
        bool ours,
        ServiceBusTestQueue queue,
        LoadRecorder recorder,
        Func<ServiceBusReceivedMessage, CancellationToken, Task> handle,
        int messages,
        TimeSpan lockDuration,
        int maxConcurrentCalls,
        TimeSpan deadline)
    {
        if (ours)
        {
            await using var processor = client.CreatePumpProcessor(queue.Path, new ServiceBusPumpProcessorOptions
            {
                MaxConcurrentCalls = maxConcurrentCalls,
                LockDuration = lockDuration,
                Logger = LoadLog.FromArguments(),
            });
            processor.ProcessMessageAsync += args => handle(args.Message, args.CancellationToken);
            processor.ProcessErrorAsync += args => { recorder.Error(args.ErrorSource, args.Exception); return Task.CompletedTask; };
            await processor.StartProcessingAsync();
            await WaitSettledAsync(queue, messages, deadline);
            await processor.StopProcessingAsync();
            var statistics = processor.GetStatistics();
            return $"; statistics: LeasesLost {statistics?.LeasesLost}, Renewals {statistics?.Renewals}, ExpiredAtHandOff {statistics?.ExpiredAtHandOff}, least hand-off headroom {statistics?.MinHandOffHeadroom?.TotalMilliseconds:0} ms";
        }
        else
        {
            await using var processor = client.CreateProcessor(queue.Path, new ServiceBusProcessorOptions { MaxConcurrentCalls = maxConcurrentCalls });
            processor.ProcessMessageAsync += args => handle(args.Message, args.CancellationToken);
            processor.ProcessErrorAsync += args => { recorder.Error(args.ErrorSource, args.Exception); return Task.CompletedTask; };
            await processor.StartProcessingAsync();
            await WaitSettledAsync(queue, messages, deadline);
            await processor.StopProcessingAsync();
            return string.Empty;
        }
    }

    private static string Describe(ServiceBusTestQueue queue, LoadRecorder recorder, int messages, TimeSpan lockDuration, TimeSpan elapsed, string extra)
    {
        var perLock = queue.RenewCount / (recorder.Held / lockDuration);
        return string.Create(CultureInfo.InvariantCulture,
            $"completed {queue.CompletedCount}/{messages}, dead-lettered {queue.DeadLetterCount}, redeliveries {recorder.Redeliveries}, in {elapsed.TotalSeconds:0} s; renew calls {queue.RenewCount} ({(double)queue.RenewCount / messages:0.0} per message, {perLock:0.00} per lock duration of a message's life), refused {queue.RefusedRenewCount}; lock lost reported {recorder.ErrorsWith(ServiceBusFailureReason.MessageLockLost)}, handlers canceled {recorder.Canceled}; hand-off headroom {recorder.Headroom()}; errors {recorder.DescribeErrors()}{extra}");
    }

    /// <summary>Waits, off the pool, until every message is completed or dead-lettered, or the deadline passes.</summary>
    private static async Task WaitSettledAsync(ServiceBusTestQueue queue, int total, TimeSpan deadline)
    {
        var until = Stopwatch.GetTimestamp() + (long)(deadline.TotalSeconds * Stopwatch.Frequency);
        await Task.Factory.StartNew(
            () =>
            {
                while (queue.CompletedCount + queue.DeadLetterCount < total && Stopwatch.GetTimestamp() < until)
                {
                    Thread.Sleep(50);
                }
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default);
    }

    /// <summary>Sends messages at a later time from a thread of its own (a timer on the starved pool would be late).</summary>
    private sealed class DelayedSender : IDisposable
    {
        private readonly ServiceBusTestQueue _queue;
        private readonly List<(long Due, string MessageId, string SessionId)> _pending = [];
        private readonly HashSet<string> _sent = new(StringComparer.Ordinal);
        private readonly Thread _thread;
        private volatile bool _stopped;

        public DelayedSender(ServiceBusTestQueue queue)
        {
            _queue = queue;
            _thread = new Thread(Run) { IsBackground = true, Name = "delayed sender" };
            _thread.Start();
        }

        public void SendLater(TimeSpan delay, string messageId, string sessionId)
        {
            lock (_pending)
            {
                _pending.Add((Stopwatch.GetTimestamp() + (long)(delay.TotalSeconds * Stopwatch.Frequency), messageId, sessionId));
            }
        }

        public void Dispose()
        {
            _stopped = true;
            _thread.Join();
        }

        private void Run()
        {
            while (!_stopped)
            {
                lock (_pending)
                {
                    var now = Stopwatch.GetTimestamp();
                    for (var i = _pending.Count - 1; i >= 0; i--)
                    {
                        if (_pending[i].Due <= now)
                        {
                            var (_, messageId, sessionId) = _pending[i];
                            _pending.RemoveAt(i);

                            // Once: a redelivered next-to-last message asks again.
                            if (_sent.Add(messageId))
                            {
                                _queue.Send("last"u8.ToArray(), messageId, sessionId);
                            }
                        }
                    }
                }

                Thread.Sleep(20);
            }
        }
    }
}
