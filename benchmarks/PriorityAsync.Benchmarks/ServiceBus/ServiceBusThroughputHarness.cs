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
/// <c>MaxConcurrentCalls</c>; no prefetch for either), same run, same in-process test broker reached over loopback AMQP
/// by the real Azure.Messaging.ServiceBus client. Each cell pre-sends N messages to a fresh queue and measures from the
/// consumer's start until the broker counts N completions; the cells of a concurrency run back to back, pump first, and
/// the whole table twice (the first pass warms up JIT and connections and is not printed unless <c>--smoke</c>).
/// </summary>
/// <remarks>Usage: <c>servicebus-throughput [--smoke] [--messages N]</c>.</remarks>
internal static class ServiceBusThroughputHarness
{
    private static readonly int[] Concurrencies = [1, 4, 16];

    public static int Run(string[] args)
    {
        var smoke = args.Contains("--smoke");
        var messages = (int)(HarnessOptions.Read(args, "--messages") ?? (smoke ? 100 : 2_000));
        return RunAsync(smoke, messages).GetAwaiter().GetResult();
    }

    private static async Task<int> RunAsync(bool smoke, int messages)
    {
        await using var broker = await ServiceBusTestBroker.StartAsync();
        await using var client = new ServiceBusClient(broker.ConnectionString);
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Service Bus throughput: no-op handler, {messages} messages pre-sent per cell to the in-process test broker (loopback AMQP, Azure.Messaging.ServiceBus client), {Environment.ProcessorCount} cores, .NET {Environment.Version}{(smoke ? ", smoke run" : string.Empty)}."));
        Console.WriteLine("Pump: PriorityTaskScheduler with 2 workers, MaxInFlight = concurrency, default batching. Processor: MaxConcurrentCalls = concurrency, PrefetchCount 0, auto-complete. Both: lock 30 s.");
        var cell = 0;
        for (var pass = smoke ? 1 : 0; pass < 2; pass++)
        {
            if (pass == 1)
            {
                Console.WriteLine();
                Console.WriteLine("| concurrency | pump (msg/s) | ServiceBusProcessor (msg/s) | pump / processor |");
                Console.WriteLine("|---:|---:|---:|---:|");
            }

            foreach (var concurrency in Concurrencies)
            {
                var pump = await MeasureAsync(broker, $"pump-{cell++}", messages, queue => DrainWithPumpAsync(client, queue, concurrency, messages));
                var processor = await MeasureAsync(broker, $"processor-{cell++}", messages, queue => DrainWithProcessorAsync(client, queue, concurrency, messages));
                if (pass == 1)
                {
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| {concurrency} | {pump:0} | {processor:0} | {pump / processor:0.00}× |"));
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

    private static async Task<TimeSpan> DrainWithPumpAsync(ServiceBusClient client, ServiceBusTestQueue queue, int concurrency, int messages)
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
            new MessagePumpOptions { MaxInFlight = concurrency, EmptyReceiveDelay = TimeSpan.FromMilliseconds(10) });
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
