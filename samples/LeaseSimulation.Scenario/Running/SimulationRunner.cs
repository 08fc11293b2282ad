using System.Diagnostics;
using LeaseSimulation.Hosting;
using LeaseSimulation.Results;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;
using LeaseSimulation.Timing;

namespace LeaseSimulation.Running;

/// <summary>Runs one strategy in one context and measures it.</summary>
public static class SimulationRunner
{
    /// <summary>The monitor's period, in scenario time (the seed prints every 3 s).</summary>
    public static readonly TimeSpan MonitorInterval = TimeSpan.FromSeconds(3);

    /// <summary>Runs <paramref name="strategy"/> with <paramref name="settings"/> and returns what it measured.</summary>
    /// <param name="settings">The run's settings; validated here.</param>
    /// <param name="strategy">The strategy.</param>
    /// <param name="started">Called with the run before the consumer starts (to watch its tracker), or <see langword="null"/>.</param>
    /// <returns>The result.</returns>
    /// <exception cref="ArgumentException">A setting is invalid; the exception names it.</exception>
    public static SimulationResult Run(SimulationSettings settings, ConsumerStrategy strategy, Action<ScenarioRun>? started = null)
    {
        ArgumentNullException.ThrowIfNull(settings);
        ArgumentNullException.ThrowIfNull(strategy);
        var wall = Stopwatch.StartNew();
        var run = new ScenarioRun(settings);
        var deadline = settings.EffectiveDeadline.TotalSeconds;
        var finished = false;
        run.Tracker.Sampled += sample =>
        {
            if (!Volatile.Read(ref finished) && sample.Seconds >= deadline && !run.ReachedDeadline)
            {
                run.StopAtDeadline();
            }
        };
        started?.Invoke(run);
        using (PrepareThreadPool(settings))
        using (run.Clock.StartMonitor(MonitorInterval, run.Tracker.Sample))
        {
            strategy.Run(run);
        }

        Volatile.Write(ref finished, true);
        var tracker = run.Tracker;
        var last = tracker.Snapshot();
        var bound = LowerBound.Compute(settings, CpuParallelism(settings, strategy, run.Clock));
        tracker.Sample(tracker.LastFinish);
        return new SimulationResult
        {
            Context = SettingNames.Of(settings.Context),
            Strategy = strategy.Name,
            Broker = SettingNames.Of(settings.Broker),
            BrokerLatencyMs = strategy.UsesInMemoryBroker(settings) ? settings.BrokerLatency.TotalMilliseconds : 0,
            Clock = SettingNames.Of(settings.Clock),
            CpuMs = settings.CpuTime.TotalMilliseconds,
            Messages = settings.Messages,
            Completed = last.Done,
            Lost = last.Lost,
            TotalSeconds = Math.Round(tracker.LastFinish.TotalSeconds, 3),
            MeanMessageSeconds = Math.Round(tracker.MeanDoneDuration.TotalSeconds, 3),
            MaxLeaseLatenessMs = Math.Round(tracker.MaxLeaseLateness.TotalMilliseconds, 1),
            CpuLimitSeconds = Math.Round(settings.CpuLimit.TotalSeconds, 3),
            LowerBoundSeconds = Math.Round(bound.Value.TotalSeconds, 3),
            LowerBoundBinding = bound.Binding,
            CpuMode = run.Clock is RealScenarioClock real ? SettingNames.Of(real.CpuMode) : null,
            StoppedAtDeadline = run.ReachedDeadline,
            AbandonedAtDeadline = tracker.Abandoned,
            WallTime = wall.Elapsed,
            Deliveries = run.ServiceBusLedger?.Deliveries,
            HandlerRuns = run.ServiceBusLedger?.HandlerRuns,
            Duplicates = run.ServiceBusLedger?.Duplicates,
            LeasesLost = run.ServiceBusLedger?.LeasesLost,
            DeadLettered = run.ServiceBusLedger?.DeadLettered,
            RenewCalls = run.ServiceBusLedger?.BrokerAudit?.RenewCalls,
            RenewCallsPerLockDuration = run.ServiceBusLedger?.RenewCallsPerLockDuration is { } perLock ? Math.Round(perLock, 2) : null,
            Timeline = tracker.Timeline,
        };
    }

    /// <summary>
    /// How many CPU operations can progress at once: 1 on one thread; otherwise the strategy's thread cap, and with
    /// conserved work (<see cref="CpuMode.Work"/>) at most the processor count. Sleeping or spinning operations are
    /// wall time, so they overlap on any number of threads.
    /// </summary>
    private static int CpuParallelism(SimulationSettings settings, ConsumerStrategy strategy, ScenarioClock clock)
    {
        if (settings.Context.IsOneThread())
        {
            return 1;
        }

        var threads = strategy.MaxCpuThreads(settings) ?? settings.Messages;
        return clock is RealScenarioClock { CpuMode: CpuMode.Work } ? Math.Min(threads, Environment.ProcessorCount) : threads;
    }

    private static IDisposable? PrepareThreadPool(SimulationSettings settings) => settings.Context switch
    {
        ContextKind.ThreadPool => ThreadPoolMinimum.Raise(settings.ThreadPoolMinWorkers > 0 ? settings.ThreadPoolMinWorkers : settings.Messages + 16),
        ContextKind.StarvedPool => SyncOverAsyncStarvation.Start(settings.StarvedPoolWorkerCap, settings.StarvationBacklog, settings.StarvationBlockTime * settings.TimeScale),
        _ => null,
    };
}
