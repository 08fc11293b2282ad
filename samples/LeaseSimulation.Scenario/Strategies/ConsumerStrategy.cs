using LeaseSimulation.Running;

namespace LeaseSimulation.Strategies;

/// <summary>
/// One way to run the seed's consumer: the code it runs and the host it runs on in each context. Add a strategy by
/// deriving from this class and listing it in <see cref="StrategyCatalog"/>.
/// </summary>
public abstract class ConsumerStrategy
{
    /// <summary>Gets the name used on the command line and in results (lower case, e.g. <c>fifo</c>).</summary>
    public abstract string Name { get; }

    /// <summary>Gets a one-sentence description.</summary>
    public abstract string Description { get; }

    /// <summary>Runs the consumer of <paramref name="run"/> to the end, on the calling thread's behalf.</summary>
    /// <param name="run">The run: settings (including the context), clock, queue and tracker.</param>
    public abstract void Run(ScenarioRun run);

    /// <inheritdoc />
    public override string ToString() => Name;
}
