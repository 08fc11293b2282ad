using LeaseSimulation.Hosting;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace WinFormsSingleThread;

/// <summary>
/// The window's scenario without a window: the simulation's <c>hosted</c> context, as in the window: a single-thread
/// FIFO loop stands in for the WinForms message loop (the project's <c>FifoSingleThreadContext</c> on virtual time,
/// Nito.AsyncEx's <c>AsyncContext</c> on the real clock); fifo and seed-yield run on it as they are, priority and pump
/// in the lanes of a <c>HostedPriorityScheduler</c> hosted on it. Prints the same counters as the window.
/// </summary>
internal static class HeadlessRun
{
    public static int Run(SampleOptions options, TextWriter output)
    {
        var settings = new SimulationSettings
        {
            Context = ContextKind.Hosted,
            Clock = options.RealClock ? ClockKind.Real : ClockKind.Virtual,
            TimeScale = options.TimeScale,
            CpuTime = TimeSpan.FromMilliseconds(options.CpuMs),
            Messages = options.Messages,
            Loops = options.Loops,
        };
        var strategy = StrategyCatalog.Get(options.Strategy);
        output.WriteLine($"{strategy.Name} on one thread ({HostLoop.NameOf(settings)} as the UI thread), CPU {options.CpuMs} ms, {options.Messages} messages, {SettingNames.Of(settings.Clock)} clock: {strategy.Description}");
        var result = SimulationRunner.Run(settings, strategy, run => run.Tracker.Sampled += sample => output.WriteLine(sample));
        output.WriteLine($"done: completed {result.Completed}, lost {result.Lost}, total {result.TotalSeconds:0.0} s, mean {result.MeanMessageSeconds:0.0} s per message, worst lease lateness {result.MaxLeaseLatenessMs:0} ms");
        return 0;
    }
}
