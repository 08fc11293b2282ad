using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Baselines;

namespace LeaseSimulation.Hosting;

/// <summary>
/// Where plain async code runs: on one thread (single-thread or hosted), a FIFO <see cref="FifoSingleThreadContext"/> (the WinForms stand-in);
/// otherwise the .NET thread pool.
/// </summary>
public static class UnprioritisedHost
{
    /// <summary>Runs <paramref name="entry"/> in the context of <paramref name="run"/> and waits for it.</summary>
    /// <param name="run">The run.</param>
    /// <param name="entry">The consumer's entry point.</param>
    public static void Run(ScenarioRun run, Func<Task> entry)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(entry);
        if (run.Settings.Context.IsOneThread())
        {
            FifoSingleThreadContext.Run(entry, run.Clock.VirtualTime);
            return;
        }

        Task.Run(entry).GetAwaiter().GetResult();
    }
}
