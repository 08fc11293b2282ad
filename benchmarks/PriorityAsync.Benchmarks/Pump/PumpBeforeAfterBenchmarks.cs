using BenchmarkDotNet.Attributes;

namespace PriorityAsync.Benchmarks.Pump;

/// <summary>
/// <see cref="PumpThroughputBenchmarks.SingleThread"/> (a no-op handler on one thread, <see
/// cref="PumpThroughputBenchmarks.MessagesPerIteration"/> messages per iteration, the memory diagnoser) built twice in
/// one run: against the libraries packed at an older commit (the "before" job, the baseline) and against the current
/// projects (the "after" job); see <see cref="PumpBeforeAfterConfig"/> and benchmarks/compare-pump.sh. Messages per
/// second = 10⁹ / Mean (ns). Goal: ≥ 500 000 msg/s and ≤ 512 B per message.
/// </summary>
[MemoryDiagnoser]
[Config(typeof(PumpBeforeAfterConfig))]
public class PumpBeforeAfterBenchmarks
{
    private readonly PumpThroughputBenchmarks _pump = new();

    /// <summary>Gets or sets the pump's MaxInFlight: 0 for its default (4 per worker).</summary>
    [Params(0, 64)]
    public int MaxInFlight { get; set; }

    /// <summary>Starts the schedulers.</summary>
    [GlobalSetup]
    public void Setup()
    {
        _pump.MaxInFlight = MaxInFlight;
        _pump.Setup();
    }

    /// <summary>Stops the schedulers.</summary>
    [GlobalCleanup]
    public void Cleanup() => _pump.Cleanup();

    /// <summary>Fills a fresh queue.</summary>
    [IterationSetup]
    public void FillQueue() => _pump.FillQueue();

    /// <summary>The pump on a <c>PriorityAsyncContext</c>: one thread.</summary>
    [Benchmark(OperationsPerInvoke = PumpThroughputBenchmarks.MessagesPerIteration)]
    public void SingleThread() => _pump.SingleThread();
}
