using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Strategies;

namespace WinFormsSingleThread;

/// <summary>
/// The window's scenario without a window: one thread (the FIFO context standing in for the WinForms message loop,
/// or PriorityAsync's single-thread context), printing the same counters as the window.
/// </summary>
internal static class HeadlessRun
{
    public static int Run(SampleOptions options, TextWriter output)
    {
        var settings = new SimulationSettings
        {
            Context = ContextKind.SingleThread,
            Clock = options.RealClock ? ClockKind.Real : ClockKind.Virtual,
            TimeScale = options.TimeScale,
            CpuTime = TimeSpan.FromMilliseconds(options.CpuMs),
            Messages = options.Messages,
            Loops = options.Loops,
        };
        var strategy = StrategyCatalog.Get(options.Strategy);
        output.WriteLine($"{strategy.Name} on one thread, CPU {options.CpuMs} ms, {options.Messages} messages, {SettingNames.Of(settings.Clock)} clock: {strategy.Description}");
        var result = SimulationRunner.Run(settings, strategy, run => run.Tracker.Sampled += sample => output.WriteLine(sample));
        output.WriteLine($"done: completed {result.Completed}, lost {result.Lost}, total {result.TotalSeconds:0.0} s, mean {result.MeanMessageSeconds:0.0} s per message, worst lease lateness {result.MaxLeaseLatenessMs:0} ms");
        return 0;
    }
}
