using BenchmarkDotNet.Attributes;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.Pump;

/// <summary>
/// Pump throughput: messages per second through a <see cref="PriorityMessagePump"/> on the in-memory broker with a no-op
/// handler. One operation is one message; an iteration starts a pump on <see cref="MessagesPerIteration"/> queued
/// messages and stops it when all are handled and settled (queue set-up is outside the measurement). Messages per
/// second = 10⁹ / Mean (ns). Goal: ≥ 200 000 msg/s on one thread.
/// </summary>
[MemoryDiagnoser]
public class PumpThroughputBenchmarks
{
    /// <summary>Messages per iteration.</summary>
    public const int MessagesPerIteration = 20_000;

    private static readonly ReadOnlyMemory<byte> Body = new byte[16];

    private PriorityAsyncContextThread _context = null!;
    private PriorityTaskScheduler _workers = null!;
    private InMemoryQueue _queue = null!;
    private int _queueNumber;

    /// <summary>Gets or sets the pump's <see cref="MessagePumpOptions.MaxInFlight"/>: 0 for its default (4 per worker).</summary>
    [Params(0, 64)]
    public int MaxInFlight { get; set; }

    /// <summary>Starts the schedulers.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _context = new PriorityAsyncContextThread();
        _workers = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = 2 });
    }

    /// <summary>Stops the schedulers.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _context.Dispose();
        _workers.Dispose();
    }

    /// <summary>Fills a fresh queue.</summary>
    [IterationSetup]
    public void FillQueue()
    {
#if PUMP_BASELINE_LEASE_BROKER
        // The "before" build of the pump comparison (PumpBeforeAfterBenchmarks): the libraries at 337f420 name the
        // in-memory broker InMemoryLeaseBroker.
        var broker = new InMemoryLeaseBroker();
#else
        var broker = new InMemoryTransport();
#endif
        _queue = broker.CreateQueue($"bench-{++_queueNumber}");
        for (var i = 0; i < MessagesPerIteration; i++)
        {
            _queue.Send(Body);
        }
    }

    /// <summary>The pump on a <see cref="PriorityAsyncContext"/>: one thread.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = MessagesPerIteration)]
    public void SingleThread() =>
        _context.Context.GetLane(LanePriority.Processing).Run(() => DrainAsync(_context.Context)).GetAwaiter().GetResult();

    /// <summary>The pump on a <see cref="PriorityTaskScheduler"/> with 2 dedicated workers.</summary>
    [Benchmark(OperationsPerInvoke = MessagesPerIteration)]
    public void MultiThread2Workers() => DrainAsync(_workers).GetAwaiter().GetResult();

    private async Task DrainAsync(PriorityScheduler scheduler)
    {
        var handled = 0;
        var allHandled = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var options = new MessagePumpOptions { MaxInFlight = MaxInFlight == 0 ? null : MaxInFlight };
        await using var pump = new PriorityMessagePump(
            _queue,
            (_, _) =>
            {
                if (Interlocked.Increment(ref handled) == MessagesPerIteration)
                {
                    allHandled.TrySetResult();
                }

                return Task.CompletedTask;
            },
            scheduler,
            options);
        await pump.StartAsync();
        await allHandled.Task;
        await pump.StopAsync();
        if (_queue.GetStatistics().Completed != MessagesPerIteration)
        {
            throw new InvalidOperationException($"Expected {MessagesPerIteration} completed messages, got {_queue.GetStatistics().Completed}.");
        }
    }
}
