using BenchmarkDotNet.Attributes;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.ShouldYield;

/// <summary>
/// Goal 4 of docs/benchmarks.md: nanoseconds per should-yield check, made where it matters: inside an item running on
/// the context's thread. One operation is <see cref="ChecksPerOperation"/> checks in a loop; the baseline is the
/// cheapest comparable flag check in .NET, <see cref="CancellationToken.IsCancellationRequested"/>.
/// </summary>
[MemoryDiagnoser]
public class ShouldYieldBenchmarks
{
    /// <summary>Checks per benchmark operation.</summary>
    public const int ChecksPerOperation = 1_000_000;

    private readonly CancellationTokenSource _neverCancelled = new();
    private PriorityAsyncContextThread _thread = null!;
    private PriorityScheduler _scheduler = null!;
    private SynchronizationContext _processingLane = null!;
    private CrossThreadInvoker _invoker = null!;
    private Action _cancellationTokenLoop = null!;
    private Action _shouldYieldLoop = null!;
    private Action _currentShouldYieldLoop = null!;
    private Action _laneHasMoreUrgentWorkLoop = null!;
    private Func<Task> _yieldIfNeededLoop = null!;
    private int _trueCount;

    /// <summary>Starts the context.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _thread = new PriorityAsyncContextThread();
        _scheduler = _thread.Context;
        _processingLane = _scheduler.GetLane(LanePriority.Processing).SynchronizationContext;
        _invoker = new CrossThreadInvoker();
        _cancellationTokenLoop = CancellationTokenLoop;
        _shouldYieldLoop = ShouldYieldLoop;
        _currentShouldYieldLoop = CurrentShouldYieldLoop;
        _laneHasMoreUrgentWorkLoop = LaneHasMoreUrgentWorkLoop;
        _yieldIfNeededLoop = YieldIfNeededLoopAsync;
    }

    /// <summary>Stops the context.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _invoker.Dispose();
        _thread.Dispose();
        _neverCancelled.Dispose();
    }

    /// <summary><c>token.IsCancellationRequested</c> in the processing lane.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = ChecksPerOperation)]
    public void CancellationToken_IsCancellationRequested() => _invoker.Invoke(_processingLane, _cancellationTokenLoop);

    /// <summary><c>scheduler.ShouldYield</c> in the processing lane.</summary>
    [Benchmark(OperationsPerInvoke = ChecksPerOperation)]
    public void Scheduler_ShouldYield() => _invoker.Invoke(_processingLane, _shouldYieldLoop);

    /// <summary><c>PriorityScheduler.Current!.ShouldYield</c> in the processing lane (code that holds no scheduler reference).</summary>
    [Benchmark(OperationsPerInvoke = ChecksPerOperation)]
    public void Current_ShouldYield() => _invoker.Invoke(_processingLane, _currentShouldYieldLoop);

    /// <summary><c>lane.HasMoreUrgentWork</c> in the processing lane: the lane read once, no thread-local lookup per check.</summary>
    [Benchmark(OperationsPerInvoke = ChecksPerOperation)]
    public void Lane_HasMoreUrgentWork() => _invoker.Invoke(_processingLane, _laneHasMoreUrgentWorkLoop);

    /// <summary><c>await PriorityScheduler.YieldIfNeeded()</c> when no yield is needed (completes synchronously).</summary>
    [Benchmark(OperationsPerInvoke = ChecksPerOperation)]
    public void Await_YieldIfNeeded_NotNeeded() => _invoker.InvokeAsync(_processingLane, _yieldIfNeededLoop);

    /// <summary><c>scheduler.ShouldYield</c> on a thread that is not the scheduler's (always false).</summary>
    [Benchmark(OperationsPerInvoke = ChecksPerOperation)]
    public void Scheduler_ShouldYield_OffThread() => ShouldYieldLoop();

    private void CancellationTokenLoop()
    {
        var token = _neverCancelled.Token;
        var count = 0;
        for (var i = 0; i < ChecksPerOperation; i++)
        {
            if (token.IsCancellationRequested)
            {
                count++;
            }
        }

        _trueCount = count;
    }

    private void ShouldYieldLoop()
    {
        var scheduler = _scheduler;
        var count = 0;
        for (var i = 0; i < ChecksPerOperation; i++)
        {
            if (scheduler.ShouldYield)
            {
                count++;
            }
        }

        _trueCount = count;
    }

    private void CurrentShouldYieldLoop()
    {
        var count = 0;
        for (var i = 0; i < ChecksPerOperation; i++)
        {
            if (PriorityScheduler.Current!.ShouldYield)
            {
                count++;
            }
        }

        _trueCount = count;
    }

    private void LaneHasMoreUrgentWorkLoop()
    {
        var lane = PriorityScheduler.CurrentLane!;
        var count = 0;
        for (var i = 0; i < ChecksPerOperation; i++)
        {
            if (lane.HasMoreUrgentWork)
            {
                count++;
            }
        }

        _trueCount = count;
    }

    private async Task YieldIfNeededLoopAsync()
    {
        for (var i = 0; i < ChecksPerOperation; i++)
        {
            await PriorityScheduler.YieldIfNeeded();
        }

        _trueCount = 0;
    }
}
