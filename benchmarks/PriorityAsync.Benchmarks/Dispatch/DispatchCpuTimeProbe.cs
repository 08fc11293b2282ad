using System.Diagnostics;
using System.Globalization;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.Dispatch;

/// <summary>
/// A second measurement of goal 1 that a shared machine disturbs less: the process CPU time (not wall time) per
/// dispatch of the same post chains as <see cref="DispatchBenchmarks"/>, FIFO and PriorityAsync interleaved round by
/// round, reporting the minimum and the 25th percentile over the rounds. Time the OS gives to other processes does
/// not count, so the ratio holds still when wall-clock figures swing by ±40 %.
/// </summary>
internal static class DispatchCpuTimeProbe
{
    public static int Run(string[] args)
    {
        var smoke = args.Contains("--smoke");
        var dispatches = smoke ? 20_000 : 400_000;
        var rounds = smoke ? 4 : 60;
        using var fifo = new FifoContextThread();
        using var priority = new PriorityAsyncContextThread();
        using var fifoChain = new PostChain(fifo.Context, dispatches);
        using var priorityChain = new PostChain(priority.Context.GetLane(LanePriority.Processing).SynchronizationContext, dispatches);
        var process = Process.GetCurrentProcess();
        var fifoSamples = new List<double>(rounds);
        var prioritySamples = new List<double>(rounds);
        for (var round = 0; round < rounds; round++)
        {
            fifoSamples.Add(CpuNanosecondsPerDispatch(process, fifoChain));
            prioritySamples.Add(CpuNanosecondsPerDispatch(process, priorityChain));
        }

        fifoSamples.Sort();
        prioritySamples.Sort();
        var quartile = rounds / 4;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"Dispatch, process CPU time per dispatch, {rounds} interleaved rounds of {dispatches} dispatches{(smoke ? ", smoke run" : string.Empty)}."));
        Console.WriteLine();
        Console.WriteLine("| Context | min (ns) | p25 (ns) | Ratio (min) | Ratio (p25) |");
        Console.WriteLine("|---|---|---|---|---|");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| FIFO single thread | {fifoSamples[0]:0.0} | {fifoSamples[quartile]:0.0} | 1.00 | 1.00 |"));
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"| PriorityAsyncContext | {prioritySamples[0]:0.0} | {prioritySamples[quartile]:0.0} | {prioritySamples[0] / fifoSamples[0]:0.00} | {prioritySamples[quartile] / fifoSamples[quartile]:0.00} |"));
        return 0;
    }

    private static double CpuNanosecondsPerDispatch(Process process, PostChain chain)
    {
        process.Refresh();
        var before = process.TotalProcessorTime;
        chain.Run();
        process.Refresh();
        return (process.TotalProcessorTime - before).TotalNanoseconds / chain.Length;
    }
}
