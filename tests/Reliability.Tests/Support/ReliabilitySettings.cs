using System.Globalization;

namespace PriorityAsync.Reliability.Tests.Support;

/// <summary>
/// How much the reliability suite runs, from the environment: <c>PRIORITYASYNC_RELIABILITY=long</c> for the long set,
/// <c>PRIORITYASYNC_SWARM_SEEDS=N</c> for the number of swarm seeds, <c>PRIORITYASYNC_SWARM_SEED=S</c> to replay one.
/// </summary>
internal static class ReliabilitySettings
{
    /// <summary>Gets whether the long set runs.</summary>
    public static bool Long { get; } = string.Equals(Environment.GetEnvironmentVariable("PRIORITYASYNC_RELIABILITY"), "long", StringComparison.OrdinalIgnoreCase);

    /// <summary>Gets the seed to replay alone, if one is set.</summary>
    public static int? ReplaySeed { get; } = ReadInt("PRIORITYASYNC_SWARM_SEED");

    /// <summary>Gets how many swarm seeds run: 20 000 by default, 200 000 in the long set.</summary>
    public static int SwarmSeeds { get; } = ReadInt("PRIORITYASYNC_SWARM_SEEDS") ?? (Long ? 200_000 : 20_000);

    private static int? ReadInt(string name) =>
        Environment.GetEnvironmentVariable(name) is { Length: > 0 } value
            ? int.Parse(value, NumberStyles.Integer, CultureInfo.InvariantCulture)
            : null;
}
