namespace LeaseSimulation.Consumers;

/// <summary>The seeded jitter of IO and receive times, shared by every strategy so that equal seeds draw equal times.</summary>
public static class ScenarioRandom
{
    /// <summary>Creates the random source of the receive loop.</summary>
    /// <param name="seed">The run's seed.</param>
    /// <returns>The random source.</returns>
    public static Random ForReceive(int seed) => new(seed);

    /// <summary>Creates the random source of one message's processor.</summary>
    /// <param name="seed">The run's seed.</param>
    /// <param name="messageId">The message's number.</param>
    /// <returns>The random source.</returns>
    public static Random ForMessage(int seed, int messageId) => new(unchecked((seed * 1_000_003) + messageId));

    /// <summary>Draws a duration within ±<paramref name="jitter"/> of <paramref name="nominal"/>.</summary>
    /// <param name="nominal">The nominal duration.</param>
    /// <param name="jitter">The relative jitter, 0 to below 1.</param>
    /// <param name="random">The random source.</param>
    /// <returns>The drawn duration.</returns>
    public static TimeSpan Jitter(TimeSpan nominal, double jitter, Random random)
    {
        ArgumentNullException.ThrowIfNull(random);
        return nominal * (1 + (((random.NextDouble() * 2) - 1) * jitter));
    }
}
