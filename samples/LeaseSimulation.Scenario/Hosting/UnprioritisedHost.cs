using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using LeaseSimulation.Baselines;

namespace LeaseSimulation.Hosting;

/// <summary>
/// Where plain async code runs: on one thread, a FIFO single-thread loop (<see cref="HostLoop"/>: the WinForms
/// stand-in <see cref="FifoSingleThreadContext"/>, or Nito.AsyncEx's <c>AsyncContext</c> for hosted on the real clock);
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
            HostLoop.Run(run, entry);
            return;
        }

        Task.Run(entry).GetAwaiter().GetResult();
    }
}
