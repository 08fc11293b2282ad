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

    /// <summary>
    /// Gets the most threads that can run CPU operations at once in a multi-thread context, or <see langword="null"/>
    /// when unbounded (the thread pool). Used by the lower bound (<c>LowerBound</c>).
    /// </summary>
    /// <param name="settings">The run's settings.</param>
    /// <returns>The thread count, or <see langword="null"/>.</returns>
    public virtual int? MaxCpuThreads(LeaseSimulation.Settings.SimulationSettings settings) => null;

    /// <summary>
    /// Gets whether the strategy receives, renews and settles through PriorityAsync's in-memory broker, so that
    /// <c>SimulationSettings.BrokerLatency</c> applies to it. The seed's consumers simulate those calls themselves.
    /// </summary>
    /// <param name="settings">The run's settings.</param>
    /// <returns><see langword="true"/> when the broker latency applies.</returns>
    public virtual bool UsesInMemoryBroker(LeaseSimulation.Settings.SimulationSettings settings) => false;

    /// <summary>
    /// Gets whether the strategy can run on <paramref name="broker"/>. By default every broker but Service Bus, where the
    /// seed's naive consumer (<c>fifo</c>), the pump and the SDK's processor run.
    /// </summary>
    /// <param name="broker">The broker.</param>
    /// <returns><see langword="true"/> when the strategy runs on it.</returns>
    public virtual bool Supports(LeaseSimulation.Settings.BrokerKind broker) => broker != LeaseSimulation.Settings.BrokerKind.ServiceBus;

    /// <inheritdoc />
    public override string ToString() => Name;
}
