using System.Runtime.CompilerServices;

namespace PriorityAsync.Reliability.Tests.Support;

/// <summary>
/// The fast/long switch and the seeds of a randomised scenario. Everything a scenario draws comes from one int seed;
/// a failure names the seed and the command that replays it.
/// </summary>
internal static class CoreReliabilityRun
{
    public const string ModeVariable = "PRIORITYASYNC_RELIABILITY";
    public const string SeedVariable = "PRIORITYASYNC_RELIABILITY_SEED";

    /// <summary>Gets whether the long set was asked for (<c>PRIORITYASYNC_RELIABILITY=long</c>).</summary>
    public static bool IsLong => string.Equals(Environment.GetEnvironmentVariable(ModeVariable), "long", StringComparison.OrdinalIgnoreCase);

    /// <summary>Picks the fast or the long figure.</summary>
    public static int Scale(int fast, int @long) => IsLong ? @long : fast;

    /// <summary>The seeds to run: the one in <see cref="SeedVariable"/>, else <paramref name="fastCount"/> (or <paramref name="longCount"/>) fixed ones.</summary>
    public static IReadOnlyList<int> Seeds(int fastCount, int longCount)
    {
        if (int.TryParse(Environment.GetEnvironmentVariable(SeedVariable), out var replay))
        {
            return [replay];
        }

        var count = IsLong ? longCount : fastCount;
        return Enumerable.Range(0, count).Select(i => 1000 + (i * 7919)).ToArray();
    }

    /// <summary>Runs <paramref name="scenario"/> once per seed; a failure is rethrown naming the seed and the replay command.</summary>
    public static void ForEachSeed(int fastCount, int longCount, Action<int> scenario, [CallerMemberName] string test = "")
    {
        foreach (var seed in Seeds(fastCount, longCount))
        {
            try
            {
                scenario(seed);
            }
            catch (Exception failure)
            {
                throw new ReliabilityFailureException(Describe(seed, test), failure);
            }
        }
    }

    /// <summary>The async form of <see cref="ForEachSeed"/>.</summary>
    public static async Task ForEachSeedAsync(int fastCount, int longCount, Func<int, Task> scenario, [CallerMemberName] string test = "")
    {
        foreach (var seed in Seeds(fastCount, longCount))
        {
            try
            {
                await scenario(seed);
            }
            catch (Exception failure)
            {
                throw new ReliabilityFailureException(Describe(seed, test), failure);
            }
        }
    }

    public static string Describe(int seed, string test) =>
        $"seed {seed} failed; replay: {SeedVariable}={seed} dotnet test tests/Reliability.Tests -c Release --filter \"FullyQualifiedName~{test}\"";
}

internal sealed class ReliabilityFailureException(string message, Exception inner) : Exception($"{message}{Environment.NewLine}{inner.Message}", inner);
