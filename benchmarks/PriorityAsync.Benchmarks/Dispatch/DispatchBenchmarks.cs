using BenchmarkDotNet.Attributes;
using LeaseSimulation.Baselines;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.Dispatch;

/// <summary>
/// Goal 1 of docs/benchmarks.md: the cost of posting a continuation and running it on a live single-thread context. One
/// operation is <see cref="DispatchesPerOperation"/> dispatches chained on the context's thread; the contexts stay
/// alive across iterations, so neither start-up nor the cross-thread wake-up at each end of a chain weighs on the
/// figure.
/// </summary>
[MemoryDiagnoser]
public class DispatchBenchmarks
{
    /// <summary>Dispatches per benchmark operation.</summary>
    public const int DispatchesPerOperation = 10_000;

    private FifoContextThread _fifo = null!;
    private PriorityAsyncContextThread _priority = null!;
    private PostChain _fifoChain = null!;
    private PostChain _priorityChain = null!;
    private ThreadPoolChain _threadPoolChain = null!;
    private CrossThreadInvoker _invoker = null!;
    private SeedPriorityProtocol _seed = null!;
    private Func<Task> _seedTurns = null!;

    /// <summary>Starts the contexts.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _fifo = new FifoContextThread();
        _priority = new PriorityAsyncContextThread();
        _fifoChain = new PostChain(_fifo.Context, DispatchesPerOperation);
        _priorityChain = new PostChain(_priority.Context.GetLane(LanePriority.Processing).SynchronizationContext, DispatchesPerOperation);
        _threadPoolChain = new ThreadPoolChain(DispatchesPerOperation);
        _invoker = new CrossThreadInvoker();
        _seed = new SeedPriorityProtocol();
        _seedTurns = SeedTurnsAsync;
    }

    /// <summary>Stops the contexts.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _fifoChain.Dispose();
        _priorityChain.Dispose();
        _threadPoolChain.Dispose();
        _invoker.Dispose();
        _fifo.Dispose();
        _priority.Dispose();
    }

    /// <summary>A plain FIFO single-thread loop (AsyncContext-style): <c>SynchronizationContext.Post</c> and run.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = DispatchesPerOperation)]
    public void FifoSingleThread() => _fifoChain.Run();

    /// <summary>A <see cref="PriorityAsyncContext"/>: <c>Post</c> to the processing lane's context and run.</summary>
    [Benchmark(OperationsPerInvoke = DispatchesPerOperation)]
    public void PriorityAsyncContext() => _priorityChain.Run();

    /// <summary>The seed's protocol on the FIFO loop: one turn (<c>await WaitForTurnAsync</c>) per dispatch.</summary>
    [Benchmark(OperationsPerInvoke = DispatchesPerOperation)]
    public void SeedProtocolOnFifo() => _invoker.InvokeAsync(_fifo.Context, _seedTurns);

    /// <summary>The .NET thread pool: a reusable <see cref="IThreadPoolWorkItem"/> re-queued to the local queue.</summary>
    [Benchmark(OperationsPerInvoke = DispatchesPerOperation)]
    public void ThreadPoolWorkItem() => _threadPoolChain.Run();

    private async Task SeedTurnsAsync()
    {
        for (var i = 0; i < DispatchesPerOperation; i++)
        {
            await _seed.WaitForTurnAsync(2);
        }
    }
}
