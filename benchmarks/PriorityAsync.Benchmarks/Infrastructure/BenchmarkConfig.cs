using System.Reflection;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Environments;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Jobs;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// The configuration every suite runs with: one job, by default a modest one (1 launch, 3 warm-up and 12 measured
/// iterations, since the 2-core machine is shared), plus GitHub-markdown export for <c>docs/benchmarks/</c>.
/// </summary>
/// <remarks>
/// BenchmarkDotNet ignores <c>--job</c> when the configuration defines a default job, and this configuration must
/// define one (see <see cref="Net10Runtime"/>). So <see cref="FromArguments"/> takes <c>--job dry|short|medium|long</c>
/// off the command line itself and builds the default job from it.
/// </remarks>
public static class BenchmarkConfig
{
    /// <summary>Builds the configuration from <paramref name="args"/> and returns the arguments left for BenchmarkDotNet.</summary>
    /// <param name="args">The command line.</param>
    /// <param name="remaining">The command line without <c>--job</c> and its value.</param>
    /// <returns>The configuration.</returns>
    public static IConfig FromArguments(string[] args, out string[] remaining)
    {
        var jobIndex = Array.FindIndex(args, a => a is "--job" or "-j");
        var jobName = jobIndex >= 0 && jobIndex + 1 < args.Length ? args[jobIndex + 1] : null;
        remaining = jobIndex >= 0 ? [.. args[..jobIndex], .. args[Math.Min(jobIndex + 2, args.Length)..]] : args;
        var baseJob = jobName?.ToLowerInvariant() switch
        {
            null => Job.Default.WithLaunchCount(1).WithWarmupCount(3).WithIterationCount(12).WithId("Modest"),
            "dry" => Job.Dry,
            "short" => Job.ShortRun,
            "medium" => Job.MediumRun,
            "long" => Job.LongRun,
            _ => throw new ArgumentException($"Unknown --job '{jobName}': use dry, short, medium or long, or omit it for the modest default.", nameof(args)),
        };

        var job = baseJob
            .WithRuntime(Net10Runtime())
            .WithToolchain(Net10Toolchain.Instance)
            .AsDefault();
        return DefaultConfig.Instance
            .AddJob(job)
            .AddExporter(MarkdownExporter.GitHub);
    }

    /// <summary>
    /// A .NET 10 runtime description BenchmarkDotNet 0.14.0 accepts. 0.14.0 predates .NET 10: it resolves the running
    /// runtime to an unrecognised moniker, which its <c>ThreadingDiagnoser</c> rejects ("supports only .NET Core 3.0+").
    /// The highest moniker it knows stands in, with the net10.0 target framework; <see cref="Net10Toolchain"/> is set
    /// explicitly, so the moniker only feeds validation. Drop this when a newer BenchmarkDotNet restores.
    /// </summary>
    private static CoreRuntime Net10Runtime()
    {
        var constructor = typeof(CoreRuntime).GetConstructor(
            BindingFlags.Instance | BindingFlags.NonPublic,
            [typeof(RuntimeMoniker), typeof(string), typeof(string)])
            ?? throw new InvalidOperationException("BenchmarkDotNet's CoreRuntime constructor has changed; remove the .NET 10 work-around.");
        return (CoreRuntime)constructor.Invoke([RuntimeMoniker.Net90, "net10.0", ".NET 10.0"]);
    }
}
