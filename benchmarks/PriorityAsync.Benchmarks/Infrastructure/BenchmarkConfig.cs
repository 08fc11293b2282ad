using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Jobs;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// The configuration every suite runs with: by default one modest job (1 launch, 3 warm-up and 12 measured iterations,
/// since the 2-core machine is shared) and a build timeout of <see cref="BuildTimeout"/>; BenchmarkDotNet's default
/// exporters include the GitHub markdown of <c>docs/benchmarks/</c>.
/// </summary>
/// <remarks>
/// BenchmarkDotNet takes a configuration's default job over <c>--job</c>, so the modest job is the default only when
/// the command line names no job; <c>--job dry|short|medium|long</c> is then read by BenchmarkDotNet itself.
/// </remarks>
public static class BenchmarkConfig
{
    /// <summary>The job of a run whose command line names none.</summary>
    public static readonly Job Modest = Job.Default.WithLaunchCount(1).WithWarmupCount(3).WithIterationCount(12).WithId("Modest");

    /// <summary>
    /// How long BenchmarkDotNet may take to build its runner. Its default, 2 minutes, is not enough on a shared 2-core
    /// machine at load 8 (seen here: the whole run then fails with "The configured timeout 00:02:00 was reached").
    /// </summary>
    public static readonly TimeSpan BuildTimeout = TimeSpan.FromMinutes(10);

    /// <summary>Builds the configuration for the command line <paramref name="args"/>.</summary>
    /// <param name="args">The command line BenchmarkDotNet will parse.</param>
    /// <returns>The configuration.</returns>
    public static IConfig FromArguments(IReadOnlyList<string> args)
    {
        ArgumentNullException.ThrowIfNull(args);
        var config = ManualConfig.Create(DefaultConfig.Instance).WithBuildTimeout(BuildTimeout);
        var namesAJob = args.Any(a => a is "--job" or "-j" || a.StartsWith("--job=", StringComparison.Ordinal));
        return namesAJob ? config : config.AddJob(Modest.AsDefault());
    }
}
