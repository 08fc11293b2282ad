using BenchmarkDotNet.Running;
using PriorityAsync.Benchmarks.Allocations;
using PriorityAsync.Benchmarks.Dispatch;
using PriorityAsync.Benchmarks.Infrastructure;
using PriorityAsync.Benchmarks.LeaseLatency;
using PriorityAsync.Benchmarks.Pump;
using PriorityAsync.Benchmarks.RenewalLoad;

// `lease-latency [--smoke]` runs the real-time lease-latency harness, `lease-latency-reserved [--smoke]` its
// reserved-capacity cells, `pump-throughput [--smoke]` the pump against a broker with latency, `dispatch-cpu-time [--smoke]` the CPU-time
// dispatch probe, `renewal-load [--smoke] [--seed N]` the renew calls per second at 1 000 and 10 000 in flight,
// `pump-allocations [--messages N]` the pump's bytes per message and a sampling allocation profile,
// `servicebus-throughput [--smoke]` the pump against ServiceBusProcessor on the Service Bus test broker, `stop-bound [--smoke]`
// the pump's stop against its ShutdownTimeout under CPU-heavy handlers, `lease-loads <load> [--consumer ours|sdk|both]`
// the Service Bus processors of the library and the SDK on users' lease loads; anything else
// goes to BenchmarkDotNet.
if (args.Length > 0 && args[0] == "lease-latency")
{
    return LeaseLatencyHarness.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "lease-latency-reserved")
{
    return ReservedCapacityHarness.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "pump-throughput")
{
    return PumpThroughputHarness.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "renewal-load")
{
    return RenewalLoadHarness.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "pump-allocations")
{
    return PumpAllocationsHarness.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "servicebus-throughput")
{
    return PriorityAsync.Benchmarks.ServiceBus.ServiceBusThroughputHarness.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "keeper-lateness")
{
    return PriorityAsync.Benchmarks.KeeperLateness.KeeperLatenessHarness.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "stop-bound")
{
    return PriorityAsync.Benchmarks.StopBound.StopBoundHarness.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "lease-loads")
{
    return PriorityAsync.Benchmarks.LeaseLoads.LeaseLoadsHarness.Run(args[1..]);
}

if (args.Length > 0 && args[0] == "dispatch-cpu-time")
{
    return DispatchCpuTimeProbe.Run(args[1..]);
}

// A benchmark that failed to build or run fails the command, so the CI smoke (`--job Dry --filter '*'`) catches it.
var summaries = BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args, BenchmarkConfig.FromArguments(args));
var failed = summaries.SelectMany(summary => summary.Reports).Count(report => !report.Success)
    + summaries.Count(summary => summary.HasCriticalValidationErrors);
if (failed > 0)
{
    Console.Error.WriteLine($"{failed} benchmark(s) failed to build or run; see the log above.");
    return 1;
}

return 0;
