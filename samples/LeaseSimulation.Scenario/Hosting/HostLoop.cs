using LeaseSimulation.Baselines;
using LeaseSimulation.Running;
using LeaseSimulation.Settings;
using Nito.AsyncEx;

namespace LeaseSimulation.Hosting;

/// <summary>
/// The single-thread loop a one-thread run's consumer runs on: on the real clock, <c>hosted</c> runs on Nito.AsyncEx's
/// <see cref="AsyncContext"/> (a context nobody here wrote, the shape of a UI thread's); everything else on the
/// project's <see cref="FifoSingleThreadContext"/>, which also drives a virtual clock when idle (an
/// <see cref="AsyncContext"/> cannot: its loop has no idle hook).
/// </summary>
public static class HostLoop
{
    /// <summary>Gets the name of the loop <paramref name="settings"/> run on (for output and docs).</summary>
    /// <param name="settings">The run's settings; a one-thread context.</param>
    /// <returns><c>AsyncContext</c> or <c>FifoSingleThreadContext</c>.</returns>
    public static string NameOf(SimulationSettings settings)
    {
        ArgumentNullException.ThrowIfNull(settings);
        return IsNitoAsyncContext(settings) ? nameof(AsyncContext) : nameof(FifoSingleThreadContext);
    }

    /// <summary>Runs <paramref name="entry"/> on the calling thread in the run's single-thread loop until it completes.</summary>
    /// <param name="run">The run; its context must be a one-thread one.</param>
    /// <param name="entry">The consumer's entry point; every continuation it does not redirect runs on the loop, FIFO.</param>
    public static void Run(ScenarioRun run, Func<Task> entry)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(entry);
        if (!run.Settings.Context.IsOneThread())
        {
            throw new ArgumentException($"A host loop is a single thread; context {SettingNames.Of(run.Settings.Context)} is not.", nameof(run));
        }

        if (IsNitoAsyncContext(run.Settings))
        {
            AsyncContext.Run(entry);
            return;
        }

        FifoSingleThreadContext.Run(entry, run.Clock.VirtualTime);
    }

    private static bool IsNitoAsyncContext(SimulationSettings settings) =>
        settings.Context == ContextKind.Hosted && settings.Clock == ClockKind.Real;
}
