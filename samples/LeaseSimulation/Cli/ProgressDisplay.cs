using LeaseSimulation.Results;
using LeaseSimulation.Running;
using LeaseSimulation.Tracking;
using Spectre.Console;

namespace LeaseSimulation.Cli;

/// <summary>A live status line with the counters of a real-time run (Spectre.Console), refreshed from the run's tracker.</summary>
public static class ProgressDisplay
{
    /// <summary>Runs <paramref name="planned"/> while showing its counters.</summary>
    /// <param name="planned">The run.</param>
    /// <param name="run">Runs it; called with a callback that receives the started run.</param>
    /// <returns>The result.</returns>
    public static SimulationResult Show(PlannedRun planned, Func<Action<ScenarioRun>, SimulationResult> run)
    {
        ArgumentNullException.ThrowIfNull(planned);
        ArgumentNullException.ThrowIfNull(run);
        SimulationResult? result = null;
        AnsiConsole.Status().Start(planned.Label, status =>
        {
            ScenarioTracker? tracker = null;
            var worker = Task.Factory.StartNew(
                () => result = run(started => Volatile.Write(ref tracker, started.Tracker)),
                CancellationToken.None,
                TaskCreationOptions.LongRunning,
                TaskScheduler.Default);
            while (!worker.Wait(TimeSpan.FromMilliseconds(200)))
            {
                if (Volatile.Read(ref tracker) is { } live)
                {
                    status.Status(Markup.Escape($"{planned.Label}: {live.Snapshot()}"));
                }
            }

            worker.GetAwaiter().GetResult();
        });
        return result!;
    }
}
