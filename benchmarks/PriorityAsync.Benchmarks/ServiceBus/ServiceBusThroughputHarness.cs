using System.Diagnostics;
using System.Globalization;
using Azure.Messaging.ServiceBus;
using PriorityAsync.Benchmarks.LeaseLatency;
using PriorityAsync.MessagePump;
using PriorityAsync.MessagePump.AzureServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Testing;

namespace PriorityAsync.Benchmarks.ServiceBus;

/// <summary>
/// Throughput on Service Bus with a no-op handler: the pump (PriorityAsync.MessagePump.AzureServiceBus) against the
/// SDK's <see cref="ServiceBusProcessor"/> at equal concurrency (the pump's <c>MaxInFlight</c> = the processor's
/// <c>MaxConcurrentCalls</c>; no prefetch for either), the pump both with its default (the next receive goes out while a
/// complete is answered: <see cref="MessagePumpOptions.ReceiveDuringSettlement"/>) and without (never more locks than
/// the processor holds), same run, same in-process test broker reached over loopback AMQP
/// by the real Azure.Messaging.ServiceBus client. Each cell pre-sends N messages to a fresh queue and measures from the
/// consumer's start until the broker counts N completions; the two cells of a round run back to back, and
/// each row several rounds with pump and processor alternating which goes first (the machine's load drifts between
/// cells; alternating cancels the drift's bias; the pump without receive-during-settlement runs right after the pump), after an unprinted warm-up of every cell (JIT, connection, links).
/// <c>--breakdown</c> instead prints where one message's time goes: the raw SDK loop (receive 1, complete) beside the
/// pump, and the pump's receive and complete round trips and the hand-offs between them (<see cref="TimedSource"/>).
/// </summary>
/// <remarks>
/// Usage: <c>servicebus-throughput [--smoke] [--messages N] [--rounds N] [--latency-ms N] [--breakdown]</c>.
/// <c>--latency-ms N</c> puts a <see cref="LatencyProxy"/> between the client and the broker: every chunk of bytes waits N ms
/// each way, so a round trip costs at least 2N ms, as to a namespace over a network (fewer messages by default: 400).
/// </remarks>
internal static class ServiceBusThroughputHarness
{
    private static readonly int[] Concurrencies = [1, 4, 16];

    public static int Run(string[] args)
    {
        var smoke = args.Contains("--smoke");
        var latency = TimeSpan.FromMilliseconds(HarnessOptions.Read(args, "--latency-ms") ?? 0);
        var messages = (int)(HarnessOptions.Read(args, "--messages") ?? (smoke ? 100 : latency > TimeSpan.Zero ? 400 : 2_000));
        var rounds = (int)(HarnessOptions.Read(args, "--rounds") ?? (smoke ? 1 : 5));
        return args.Contains("--breakdown")
            ? BreakdownAsync(messages).GetAwaiter().GetResult()
            : RunAsync(smoke, messages, rounds, latency).GetAwaiter().GetResult();
    }

    private static async Task<int> RunAsync(bool smoke, int messages, int rounds, TimeSpan latency)
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        await using var proxy = latency > TimeSpan.Zero ? new LatencyProxy(broker.Port, latency) : null;
        await using var client = new ServiceBusClient(proxy?.Route(broker.ConnectionString, broker.Port) ?? broker.ConnectionString);
        var network = proxy is null ? "loopback AMQP" : string.Create(CultureInfo.InvariantCulture, $"AMQP through a relay that delays every chunk {latency.TotalMilliseconds:0.#} ms each way");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Service Bus throughput: no-op handler, {messages} messages pre-sent per cell to the in-process test broker ({network}, Azure.Messaging.ServiceBus client), {Environment.ProcessorCount} cores, .NET {Environment.Version}{(smoke ? ", smoke run" : string.Empty)}."));
        Console.WriteLine("Pump: PriorityTaskScheduler with 2 workers, MaxInFlight = concurrency, default batching; 'strict': ReceiveDuringSettlement = false (at most MaxInFlight locked, as the processor). Processor: MaxConcurrentCalls = concurrency, PrefetchCount 0, auto-complete. All: lock 30 s.");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Each row: {rounds} rounds, pump and processor alternating which goes first; the median of each side, and the median of the rounds' ratios (each round's two cells run back to back)."));
        var cell = 0;
        if (!smoke)
        {
            // Warm-up, not printed: JIT, the connection, the first links.
            foreach (var concurrency in Concurrencies)
            {
                await MeasureAsync(broker, $"warm-pump-{cell++}", messages, queue => DrainWithPumpAsync(client, queue, concurrency, messages, receiveDuringSettlement: true));
                await MeasureAsync(broker, $"warm-strict-{cell++}", messages, queue => DrainWithPumpAsync(client, queue, concurrency, messages, receiveDuringSettlement: false));
                await MeasureAsync(broker, $"warm-processor-{cell++}", messages, queue => DrainWithProcessorAsync(client, queue, concurrency, messages));
            }
        }

        Console.WriteLine();
        Console.WriteLine("| concurrency | pump (msg/s) | pump, strict (msg/s) | ServiceBusProcessor (msg/s) | pump / processor (median, min–max of rounds) | strict / processor | load average (start → end) |");
        Console.WriteLine("|---:|---:|---:|---:|---:|---:|---:|");
        foreach (var concurrency in Concurrencies)
        {
            var loadBefore = LoadAverage();
            var pumps = new List<double>();
            var stricts = new List<double>();
            var processors = new List<double>();
            var ratios = new List<double>();
            var strictRatios = new List<double>();
            for (var round = 0; round < rounds; round++)
            {
                double pump, strict, processor;
                if (round % 2 == 0)
                {
                    pump = await MeasureAsync(broker, $"pump-{cell++}", messages, queue => DrainWithPumpAsync(client, queue, concurrency, messages, receiveDuringSettlement: true));
                    strict = await MeasureAsync(broker, $"strict-{cell++}", messages, queue => DrainWithPumpAsync(client, queue, concurrency, messages, receiveDuringSettlement: false));
                    processor = await MeasureAsync(broker, $"processor-{cell++}", messages, queue => DrainWithProcessorAsync(client, queue, concurrency, messages));
                }
                else
                {
                    processor = await MeasureAsync(broker, $"processor-{cell++}", messages, queue => DrainWithProcessorAsync(client, queue, concurrency, messages));
                    pump = await MeasureAsync(broker, $"pump-{cell++}", messages, queue => DrainWithPumpAsync(client, queue, concurrency, messages, receiveDuringSettlement: true));
                    strict = await MeasureAsync(broker, $"strict-{cell++}", messages, queue => DrainWithPumpAsync(client, queue, concurrency, messages, receiveDuringSettlement: false));
                }

                pumps.Add(pump);
                stricts.Add(strict);
                processors.Add(processor);
                ratios.Add(pump / processor);
                strictRatios.Add(strict / processor);
            }

            Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {concurrency} | {Median(pumps):0} | {Median(stricts):0} | {Median(processors):0} | {Median(ratios):0.00}× ({ratios.Min():0.00}–{ratios.Max():0.00}) | {Median(strictRatios):0.00}× ({strictRatios.Min():0.00}–{strictRatios.Max():0.00}) | {loadBefore} → {LoadAverage()} |"));
        }

        return 0;
    }

    private static double Median(List<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }

    /// <summary>The one-minute load average (Linux), or "n/a".</summary>
    private static string LoadAverage()
    {
        try
        {
            return File.ReadAllText("/proc/loadavg").Split(' ')[0];
        }
        catch (IOException)
        {
            return "n/a";
        }
        catch (UnauthorizedAccessException)
        {
            return "n/a";
        }
    }

    private static async Task<int> BreakdownAsync(int messages)
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        await using var client = new ServiceBusClient(broker.ConnectionString);
        for (var pass = 0; pass < 2; pass++)
        {
            foreach (var concurrency in new[] { 1, 4 })
            {
                var queue = broker.CreateQueue($"raw-{pass}-{concurrency}", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
                for (var i = 0; i < messages; i++)
                {
                    queue.Send(new byte[16], i.ToString(CultureInfo.InvariantCulture));
                }

                await using var receiver = client.CreateReceiver(queue.Path);
                var started = Stopwatch.GetTimestamp();
                var loops = new Task[concurrency];
                for (var l = 0; l < concurrency; l++)
                {
                    loops[l] = Task.Run(async () =>
                    {
                        while (queue.CompletedCount < messages)
                        {
                            foreach (var m in await receiver.ReceiveMessagesAsync(1, TimeSpan.FromMilliseconds(200)))
                            {
                                await receiver.CompleteMessageAsync(m);
                            }
                        }
                    });
                }

                await Task.WhenAll(loops);
                Console.WriteLine($"raw receive(1)+complete loops x{concurrency}: {messages / Stopwatch.GetElapsedTime(started).TotalSeconds:0} msg/s");

                var timedQueue = broker.CreateQueue($"timed-{pass}-{concurrency}", new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
                for (var i = 0; i < messages; i++)
                {
                    timedQueue.Send(new byte[16], i.ToString(CultureInfo.InvariantCulture));
                }

                using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
                await using var transport = new ServiceBusTransport(client, new ServiceBusTransportOptions { ReadEntityProperties = false });
                await using var inner = await transport.OpenAsync(
                    ServiceBusEntity.Queue(timedQueue.Path),
                    new ServiceBusSourceOptions { LockDuration = timedQueue.LockDuration, PrefetchCount = 0, MaxWaitTime = TimeSpan.FromMilliseconds(200) });
                var timed = new TimedSource(inner);
                started = Stopwatch.GetTimestamp();
                var pump = new PriorityMessagePump(
                    timed,
                    (_, _) => { timed.Stamp("handler"); return Task.CompletedTask; },
                    scheduler,
                    new MessagePumpOptions { MaxInFlight = concurrency, EmptyReceiveDelay = TimeSpan.FromMilliseconds(10) });
                await using (pump)
                {
                    await pump.StartAsync();
                    await WaitForCompletionsAsync(timedQueue, messages);
                    Console.WriteLine($"pump x{concurrency}: {messages / Stopwatch.GetElapsedTime(started).TotalSeconds:0} msg/s");
                    await pump.StopAsync();
                }

                if (pass == 1)
                {
                    timed.Print(Console.Out);
                }
            }
        }

        return 0;
    }

    private static async Task<double> MeasureAsync(ServiceBusTestBroker broker, string name, int messages, Func<ServiceBusTestQueue, Task<TimeSpan>> drain)
    {
        var queue = broker.CreateQueue(name, new ServiceBusTestEntityOptions { LockDuration = TimeSpan.FromSeconds(30) });
        for (var i = 0; i < messages; i++)
        {
            queue.Send(new byte[16], i.ToString(CultureInfo.InvariantCulture));
        }

        var elapsed = await drain(queue);
        if (queue.CompletedCount != messages || queue.LockedCount != 0 || queue.DeadLetterCount != 0)
        {
            throw new InvalidOperationException($"{name}: expected {messages} completed and nothing locked or dead-lettered; got {queue.CompletedCount} completed, {queue.LockedCount} locked, {queue.DeadLetterCount} dead-lettered.");
        }

        return messages / elapsed.TotalSeconds;
    }

    private static async Task<TimeSpan> DrainWithPumpAsync(ServiceBusClient client, ServiceBusTestQueue queue, int concurrency, int messages, bool receiveDuringSettlement)
    {
        using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
        await using var transport = new ServiceBusTransport(client, new ServiceBusTransportOptions { ReadEntityProperties = false });
        await using var source = await transport.OpenAsync(
            ServiceBusEntity.Queue(queue.Path),
            new ServiceBusSourceOptions { LockDuration = queue.LockDuration, PrefetchCount = 0, MaxWaitTime = TimeSpan.FromMilliseconds(200) });
        var started = Stopwatch.GetTimestamp();
        var pump = new PriorityMessagePump(
            source,
            static (_, _) => Task.CompletedTask,
            scheduler,
            new MessagePumpOptions { MaxInFlight = concurrency, EmptyReceiveDelay = TimeSpan.FromMilliseconds(10), ReceiveDuringSettlement = receiveDuringSettlement });
        await using (pump)
        {
            await pump.StartAsync();
            await WaitForCompletionsAsync(queue, messages);
            var elapsed = Stopwatch.GetElapsedTime(started);
            await pump.StopAsync();
            return elapsed;
        }
    }

    private static async Task<TimeSpan> DrainWithProcessorAsync(ServiceBusClient client, ServiceBusTestQueue queue, int concurrency, int messages)
    {
        var processor = client.CreateProcessor(queue.Path, new ServiceBusProcessorOptions { MaxConcurrentCalls = concurrency, PrefetchCount = 0 });
        await using (processor)
        {
            processor.ProcessMessageAsync += static _ => Task.CompletedTask;
            processor.ProcessErrorAsync += static args =>
            {
                Console.Error.WriteLine($"processor error ({args.ErrorSource}): {args.Exception.Message}");
                return Task.CompletedTask;
            };
            var started = Stopwatch.GetTimestamp();
            await processor.StartProcessingAsync();
            await WaitForCompletionsAsync(queue, messages);
            var elapsed = Stopwatch.GetElapsedTime(started);
            await processor.StopProcessingAsync();
            return elapsed;
        }
    }

    private static async Task WaitForCompletionsAsync(ServiceBusTestQueue queue, int messages)
    {
        while (queue.CompletedCount < messages)
        {
            await Task.Delay(TimeSpan.FromMilliseconds(5));
        }
    }
}
