namespace LeaseSimulation.Strategies;

/// <summary>The strategies the simulation knows, in table order.</summary>
public static class StrategyCatalog
{
    /// <summary>Gets every strategy.</summary>
    public static IReadOnlyList<ConsumerStrategy> All { get; } =
    [
        new FifoStrategy(),
        new SeedYieldStrategy(),
        new PriorityStrategy(),
        new PumpStrategy(),
        new ProcessorStrategy(followsGuide: false),
        new ProcessorStrategy(followsGuide: true),
        new ProcessorKeeperStrategy(),
        new ReceiverKeeperStrategy(),
    ];

    /// <summary>Finds a strategy by name (case-insensitive).</summary>
    /// <param name="name">The name, e.g. <c>priority</c>.</param>
    /// <returns>The strategy.</returns>
    /// <exception cref="ArgumentException">No strategy has that name; the message lists the known ones.</exception>
    public static ConsumerStrategy Get(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        return All.FirstOrDefault(s => string.Equals(s.Name, name, StringComparison.OrdinalIgnoreCase))
            ?? throw new ArgumentException($"Unknown strategy '{name}'; known: {string.Join(", ", All.Select(s => s.Name))}.", nameof(name));
    }
}
