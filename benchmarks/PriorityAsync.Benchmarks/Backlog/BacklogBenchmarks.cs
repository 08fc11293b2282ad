using BenchmarkDotNet.Attributes;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.Backlog;

/// <summary>
/// Goal 3 of docs/benchmarks.md: the cost of dispatching urgent (lease-lane) work while items wait in lower lanes.
/// PriorityAsync with 0, 1 000 and 100 000 waiting items (half in the processing lane, half in the receive lane); the
/// seed's protocol with 0, 10, 100 and 1 000 waiting continuations on a FIFO thread. Every ratio is against
/// PriorityAsync with no backlog.
/// </summary>
[MemoryDiagnoser]
public class BacklogBenchmarks
{
    /// <summary>Urgent dispatches per operation for PriorityAsync.</summary>
    public const int UrgentDispatchesPerOperation = 10_000;

    /// <summary>Urgent turns per operation for the seed's protocol (each turn costs a pass over the backlog).</summary>
    public const int SeedTurnsPerOperation = 200;

    private readonly List<IDisposable> _resources = [];
    private readonly Dictionary<int, ParkedPostChain> _priorityChains = [];
    private readonly Dictionary<int, ParkedSeedTurns> _seedTurns = [];

    /// <summary>Starts one parked context per backlog size.</summary>
    [GlobalSetup]
    public void Setup()
    {
        foreach (var backlog in new[] { 0, 1_000, 100_000 })
        {
            _priorityChains[backlog] = StartPriorityAsync(backlog);
        }

        foreach (var backlog in new[] { 0, 10, 100, 1_000 })
        {
            _seedTurns[backlog] = StartSeed(backlog);
        }
    }

    /// <summary>Releases the parked threads and stops the contexts.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        for (var i = _resources.Count - 1; i >= 0; i--)
        {
            _resources[i].Dispose();
        }
    }

    /// <summary>PriorityAsync, nothing waiting in lower lanes.</summary>
    [Benchmark(Baseline = true, OperationsPerInvoke = UrgentDispatchesPerOperation)]
    public void PriorityAsync_Backlog0() => _priorityChains[0].Run();

    /// <summary>PriorityAsync, 1 000 items waiting in lower lanes.</summary>
    [Benchmark(OperationsPerInvoke = UrgentDispatchesPerOperation)]
    public void PriorityAsync_Backlog1000() => _priorityChains[1_000].Run();

    /// <summary>PriorityAsync, 100 000 items waiting in lower lanes.</summary>
    [Benchmark(OperationsPerInvoke = UrgentDispatchesPerOperation)]
    public void PriorityAsync_Backlog100000() => _priorityChains[100_000].Run();

    /// <summary>The seed's protocol, nothing waiting.</summary>
    [Benchmark(OperationsPerInvoke = SeedTurnsPerOperation)]
    public void Seed_Backlog0() => _seedTurns[0].Run();

    /// <summary>The seed's protocol, 10 continuations waiting.</summary>
    [Benchmark(OperationsPerInvoke = SeedTurnsPerOperation)]
    public void Seed_Backlog10() => _seedTurns[10].Run();

    /// <summary>The seed's protocol, 100 continuations waiting.</summary>
    [Benchmark(OperationsPerInvoke = SeedTurnsPerOperation)]
    public void Seed_Backlog100() => _seedTurns[100].Run();

    /// <summary>The seed's protocol, 1 000 continuations waiting.</summary>
    [Benchmark(OperationsPerInvoke = SeedTurnsPerOperation)]
    public void Seed_Backlog1000() => _seedTurns[1_000].Run();

    private ParkedPostChain StartPriorityAsync(int backlog)
    {
        var thread = new PriorityAsyncContextThread();
        _resources.Add(thread);
        var context = thread.Context;
        var processing = context.GetLane(LanePriority.Processing).SynchronizationContext;
        var receive = context.GetLane(LanePriority.Receive).SynchronizationContext;
        var chain = new ParkedPostChain(context.GetLane(LanePriority.Lease).SynchronizationContext, UrgentDispatchesPerOperation);
        _resources.Add(chain);

        // Queue the backlog and park from inside the context, so none of the backlog runs before the thread parks.
        var invoker = new CrossThreadInvoker();
        invoker.Invoke(processing, () =>
        {
            for (var i = 0; i < backlog; i++)
            {
                (i % 2 == 0 ? processing : receive).Post(static _ => { }, null);
            }

            chain.Start();
        });
        invoker.Dispose();
        return chain;
    }

    private ParkedSeedTurns StartSeed(int backlog)
    {
        var fifo = new FifoContextThread();
        _resources.Add(fifo);
        var turns = new ParkedSeedTurns(SeedTurnsPerOperation);
        _resources.Add(turns);
        turns.Start(fifo.Context, backlog);
        return turns;
    }
}
