using LeaseSimulation.Consumers;
using LeaseSimulation.Running;
using PriorityAsync;

namespace WinFormsSingleThread;

/// <summary>
/// Runs the seed's consumer from a WinForms event handler: fifo and seed-yield on the UI thread itself (every
/// continuation goes through <c>WindowsFormsSynchronizationContext</c>, FIFO, as in the seed), priority on a
/// PriorityAsync single-thread context of its own thread.
/// </summary>
internal static class UiThreadConsumers
{
    public static readonly string[] Names = ["fifo", "seed-yield", "priority"];

    public static async Task RunAsync(string strategy, ScenarioRun run)
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
                await using (var thread = new PriorityAsyncContextThread())
                {
                    await thread.RunAsync(LanePriority.Receive, () => new SeedConsumer(run, new LaneOrdering(thread.Context)).RunAsync());
                }

                break;
            default:
                throw new ArgumentOutOfRangeException(nameof(strategy), strategy, $"The window runs {string.Join(", ", Names)}.");
        }
    }
}
