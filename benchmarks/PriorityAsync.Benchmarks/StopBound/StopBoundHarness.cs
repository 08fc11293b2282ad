using System.Diagnostics;
using System.Globalization;
using PriorityAsync.Benchmarks.LeaseLatency;
using PriorityAsync.MessagePump;

namespace PriorityAsync.Benchmarks.StopBound;

/// <summary>
/// How long <see cref="PriorityMessagePump.StopAsync"/> takes against <see cref="MessagePumpOptions.ShutdownTimeout"/>
/// while every handler is busy with CPU chunks that yield between them: the in-memory broker on the real
/// clock, <c>MaxInFlight</c> 4, handlers of 40 chunks of spun CPU, on a <see cref="PriorityTaskScheduler"/> with 1, 2
/// and 4 workers (plus its reserved lease worker). The stop is called once every in-flight handler has started; the
/// figure is the stop's wall time and what it exceeds the timeout by, next to one chunk. The contract: at most the
/// timeout plus one chunk (the one running when the timeout expires), with handlers canceled and nothing left locked.
/// </summary>
/// <remarks>Usage: <c>stop-bound [--smoke] [--chunk-ms N] [--timeout-ms N]</c>; <c>--smoke</c> runs 50 ms chunks and a 500 ms timeout on 1 worker. It fails when a message stays locked after the stop.</remarks>
internal static class StopBoundHarness
{
    public static int Run(string[] args)
    {
        var smoke = args.Contains("--smoke");
        var chunk = TimeSpan.FromMilliseconds(HarnessOptions.Read(args, "--chunk-ms") ?? (smoke ? 50 : 250));
        var timeout = TimeSpan.FromMilliseconds(HarnessOptions.Read(args, "--timeout-ms") ?? (smoke ? 500 : 2000));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Stop bound: MaxInFlight 4, handlers of 40 x {chunk.TotalMilliseconds:0} ms spun CPU yielding between chunks, ShutdownTimeout {timeout.TotalSeconds:0.###} s; {Environment.ProcessorCount} cores."));
        Console.WriteLine();
        Console.WriteLine("| workers | handlers running at stop | stop (s) | over the timeout (ms) | one chunk (ms) | handlers canceled | locked after stop |");
        Console.WriteLine("|---:|---:|---:|---:|---:|---:|---:|");
        var failed = false;
        foreach (var workers in smoke ? [1] : new[] { 1, 2, 4 })
        {
            failed |= !Measure(workers, chunk, timeout);
        }

        return failed ? 1 : 0;
    }

    private static bool Measure(int workers, TimeSpan chunk, TimeSpan timeout)
    {
        var queue = new InMemoryTransport().CreateQueue("orders", new InMemoryQueueOptions { LockDuration = TimeSpan.FromSeconds(30) });
        for (var i = 0; i < 16; i++)
        {
            queue.Send(BitConverter.GetBytes(i));
        }

        var running = 0;
        var exited = 0;
        var canceled = 0;
        using var scheduler = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = workers });
        var pump = new PriorityMessagePump(
            queue,
            async (context, cancellationToken) =>
            {
                Interlocked.Increment(ref running);
                try
                {
                    for (var i = 0; i < 40; i++)
                    {
                        if (cancellationToken.IsCancellationRequested)
                        {
                            Interlocked.Increment(ref canceled);
                            cancellationToken.ThrowIfCancellationRequested();
                        }

                        Spin(chunk);
                        await PriorityScheduler.YieldIfNeeded();
                    }
                }
                finally
                {
                    Interlocked.Increment(ref exited);
                }
            },
            scheduler,
            new MessagePumpOptions { MaxInFlight = 4, ShutdownTimeout = timeout });
        pump.StartAsync().GetAwaiter().GetResult();
        var waited = Stopwatch.StartNew();
        while (Volatile.Read(ref running) < Math.Min(4, workers) && waited.Elapsed < TimeSpan.FromSeconds(30))
        {
            Thread.Sleep(10);
        }

        var atStop = Volatile.Read(ref running);
        var stop = Stopwatch.StartNew();
        pump.StopAsync().GetAwaiter().GetResult();
        stop.Stop();
        var locked = queue.GetStatistics().InFlight;
        var unwinding = Stopwatch.StartNew();
        while (Volatile.Read(ref exited) < Volatile.Read(ref running) && unwinding.Elapsed < TimeSpan.FromSeconds(30))
        {
            Thread.Sleep(10); // the canceled handlers notice their token at their next chunk, after the stop returned
        }

        pump.DisposeAsync().AsTask().GetAwaiter().GetResult();
        Console.WriteLine(string.Create(
            CultureInfo.InvariantCulture,
            $"| {workers} | {atStop} | {stop.Elapsed.TotalSeconds:0.000} | {(stop.Elapsed - timeout).TotalMilliseconds:0} | {chunk.TotalMilliseconds:0} | {Volatile.Read(ref canceled)} | {locked} |"));
        return locked == 0;
    }

    private static void Spin(TimeSpan duration)
    {
        var watch = Stopwatch.StartNew();
        while (watch.Elapsed < duration)
        {
            Thread.SpinWait(100);
        }
    }
}
