using System.Windows.Forms;
using LeaseSimulation.Consumers;
using LeaseSimulation.Hosting;
using LeaseSimulation.Running;
using LeaseSimulation.Strategies;
using PriorityAsync;

namespace WinFormsSingleThread;

/// <summary>
/// Runs the seed's consumer from a WinForms event handler, on the UI thread itself: fifo and seed-yield as the seed
/// wrote it (every continuation goes through <c>WindowsFormsSynchronizationContext</c>, FIFO), priority and pump in the
/// lanes of a <see cref="HostedPriorityScheduler"/> hosted on that same context (most urgent first, and the message
/// loop runs input and paint between the scheduler's slices).
/// </summary>
internal static class UiThreadConsumers
{
    public static readonly string[] Names = ["fifo", "seed-yield", "priority", "pump"];

    public static async Task RunAsync(string strategy, ScenarioRun run, Control window)
    {
        switch (strategy)
        {
            case "fifo":
                await new SeedConsumer(run, new UnorderedContinuations(run.Clock.TimeProvider)).RunAsync();
                break;
            case "seed-yield":
                await new SeedConsumer(run, new SeedProtocolOrdering(run.Clock.TimeProvider)).RunAsync();
                break;
            case "priority":
                await RunInLanesOnThisThreadAsync(window, run, scheduler => new SeedConsumer(run, new LaneOrdering(scheduler)).RunAsync());
                break;
            case "pump":
                await RunInLanesOnThisThreadAsync(window, run, scheduler => PumpStrategy.RunOnInMemoryBrokerAsync(run, scheduler));
                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(strategy), strategy, $"The window runs {string.Join(", ", Names)}.");
        }
    }

    // Lanes on the UI thread: hosted on the thread's message loop, run when it is idle (IdleHost).
    private static async Task RunInLanesOnThisThreadAsync(Control window, ScenarioRun run, Func<PriorityScheduler, Task> consumer)
    {
        using var uiThread = new IdleHost(window);
        await PriorityHost.RunHostedAsync(uiThread, run, consumer);
    }
}
