using BenchmarkDotNet.Attributes;

namespace PriorityAsync.Benchmarks.Throughput;

/// <summary>
/// Goal 5 of docs/benchmarks.md: throughput of a <see cref="PriorityTaskScheduler"/> with 2 workers against the .NET
/// thread pool for many short work items queued from outside (one operation = <see cref="ItemsPerOperation"/> items
/// queued in a burst, then a wait for the last). <see cref="ThreadingDiagnoserAttribute"/> adds completed pool work
/// items and lock contentions.
/// </summary>
[MemoryDiagnoser]
[ThreadingDiagnoser]
public class MultiThreadThroughputBenchmarks
{
    /// <summary>Work items per benchmark operation.</summary>
    public const int ItemsPerOperation = 10_000;

    private const int Workers = 2;

    private ShortWorkItem _batch = null!;
    private PriorityTaskScheduler _dedicated = null!;
    private PriorityTaskScheduler _threadPoolMode = null!;
    private SynchronizationContext _dedicatedLane = null!;
    private SynchronizationContext _threadPoolModeLane = null!;
    private TaskFactory _dedicatedTasks = null!;

    /// <summary>Starts the schedulers.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _batch = new ShortWorkItem();
        _dedicated = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = Workers, Mode = PriorityWorkerMode.DedicatedThreads });
        _threadPoolMode = new PriorityTaskScheduler(new PriorityTaskSchedulerOptions { WorkerCount = Workers, Mode = PriorityWorkerMode.ThreadPool });
        _dedicatedLane = _dedicated.GetLane(LanePriority.Processing).SynchronizationContext;
        _threadPoolModeLane = _threadPoolMode.GetLane(LanePriority.Processing).SynchronizationContext;
        _dedicatedTasks = new TaskFactory(_dedicated.GetLane(LanePriority.Processing).TaskScheduler);
    }

    /// <summary>Stops the schedulers.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        _dedicated.Dispose();
        _threadPoolMode.Dispose();
        _batch.Dispose();
    }

    /// <summary>The .NET thread pool: <c>ThreadPool.UnsafeQueueUserWorkItem(callback, state, preferLocal: false)</c>.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = ItemsPerOperation)]
    public void ThreadPool_QueueUserWorkItem()
    {
        _batch.Begin(ItemsPerOperation);
        for (var i = 0; i < ItemsPerOperation; i++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(ShortWorkItem.ThreadPoolCallback, _batch, preferLocal: false);
        }

        _batch.Wait();
    }

    /// <summary>The .NET thread pool through tasks: <c>Task.Factory.StartNew(action, state)</c> on the default scheduler.</summary>
    [Benchmark(OperationsPerInvoke = ItemsPerOperation)]
    public void ThreadPool_StartNew()
    {
        _batch.Begin(ItemsPerOperation);
        for (var i = 0; i < ItemsPerOperation; i++)
        {
            Task.Factory.StartNew(ShortWorkItem.TaskCallback, _batch, CancellationToken.None, TaskCreationOptions.DenyChildAttach, TaskScheduler.Default);
        }

        _batch.Wait();
    }

    /// <summary>PriorityTaskScheduler, 2 dedicated workers: <c>Post</c> to the processing lane.</summary>
    [Benchmark(OperationsPerInvoke = ItemsPerOperation)]
    public void PriorityTaskScheduler_Dedicated_Post() => PostBatch(_dedicatedLane);

    /// <summary>PriorityTaskScheduler, at most 2 thread-pool runners: <c>Post</c> to the processing lane.</summary>
    [Benchmark(OperationsPerInvoke = ItemsPerOperation)]
    public void PriorityTaskScheduler_ThreadPoolMode_Post() => PostBatch(_threadPoolModeLane);

    /// <summary>PriorityTaskScheduler, 2 dedicated workers: <c>lane.TaskFactory.StartNew(action, state)</c>.</summary>
    [Benchmark(OperationsPerInvoke = ItemsPerOperation)]
    public void PriorityTaskScheduler_Dedicated_StartNew()
    {
        _batch.Begin(ItemsPerOperation);
        for (var i = 0; i < ItemsPerOperation; i++)
        {
            _dedicatedTasks.StartNew(ShortWorkItem.TaskCallback, _batch);
        }

        _batch.Wait();
    }

    private void PostBatch(SynchronizationContext lane)
    {
        _batch.Begin(ItemsPerOperation);
        for (var i = 0; i < ItemsPerOperation; i++)
        {
            lane.Post(ShortWorkItem.Callback, _batch);
        }

        _batch.Wait();
    }
}
