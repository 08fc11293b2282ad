using BenchmarkDotNet.Attributes;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.Yielding;

/// <summary>
/// Goal 2 of docs/benchmarks.md: one yield round trip (the method yields, the loop dispatches its continuation, the
/// method resumes) with <see cref="PriorityScheduler.YieldTo(LanePriority)"/> against <c>await Task.Yield()</c> on a
/// plain FIFO single-thread context. One operation is <see cref="YieldsPerOperation"/> awaits in one async method.
/// </summary>
[MemoryDiagnoser]
public class YieldRoundTripBenchmarks
{
    /// <summary>Awaits per benchmark operation.</summary>
    public const int YieldsPerOperation = 10_000;

    private FifoContextThread _fifo = null!;
    private PriorityAsyncContextThread _priority = null!;
    private SynchronizationContext _processingLane = null!;
    private CrossThreadInvoker _invoker = null!;
    private Func<Task> _taskYieldLoop = null!;
    private Func<Task> _yieldToSameLaneLoop = null!;
    private Func<Task> _yieldToLeaseAndBackLoop = null!;

    /// <summary>Starts the contexts.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _fifo = new FifoContextThread();
        _priority = new PriorityAsyncContextThread();
        _processingLane = _priority.Context.GetLane(LanePriority.Processing).SynchronizationContext;
        _invoker = new CrossThreadInvoker();
        _taskYieldLoop = TaskYieldLoopAsync;
        _yieldToSameLaneLoop = YieldToSameLaneLoopAsync;
        _yieldToLeaseAndBackLoop = YieldToLeaseAndBackLoopAsync;
    }

    /// <summary>Stops the contexts.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _invoker.Dispose();
        _fifo.Dispose();
        _priority.Dispose();
    }

    /// <summary><c>await Task.Yield()</c> on the plain FIFO single-thread context.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = YieldsPerOperation)]
    public void FifoContext_TaskYield() => _invoker.InvokeAsync(_fifo.Context, _taskYieldLoop);

    /// <summary><c>await PriorityScheduler.YieldTo(LanePriority.Processing)</c> from the processing lane.</summary>
    [Benchmark(OperationsPerInvoke = YieldsPerOperation)]
    public void PriorityAsyncContext_YieldToSameLane() => _invoker.InvokeAsync(_processingLane, _yieldToSameLaneLoop);

    /// <summary>Alternating <c>YieldTo(Lease)</c> and <c>YieldTo(Processing)</c>: every await changes lane.</summary>
    [Benchmark(OperationsPerInvoke = YieldsPerOperation)]
    public void PriorityAsyncContext_YieldToOtherLane() => _invoker.InvokeAsync(_processingLane, _yieldToLeaseAndBackLoop);

    /// <summary><c>await Task.Yield()</c> in the processing lane (posts through the lane's synchronization context).</summary>
    [Benchmark(OperationsPerInvoke = YieldsPerOperation)]
    public void PriorityAsyncContext_TaskYield() => _invoker.InvokeAsync(_processingLane, _taskYieldLoop);

    private static async Task TaskYieldLoopAsync()
    {
        for (var i = 0; i < YieldsPerOperation; i++)
        {
            await Task.Yield();
        }
    }

    private static async Task YieldToSameLaneLoopAsync()
    {
        for (var i = 0; i < YieldsPerOperation; i++)
        {
            await PriorityScheduler.YieldTo(LanePriority.Processing);
        }
    }

    private static async Task YieldToLeaseAndBackLoopAsync()
    {
        for (var i = 0; i < YieldsPerOperation / 2; i++)
        {
            await PriorityScheduler.YieldTo(LanePriority.Lease);
            await PriorityScheduler.YieldTo(LanePriority.Processing);
        }
    }
}
