using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Filters;
using BenchmarkDotNet.Jobs;
using PriorityAsync.Benchmarks.Infrastructure;

namespace PriorityAsync.Benchmarks.Pump;

/// <summary>
/// The jobs of <see cref="PumpBeforeAfterBenchmarks"/>: a "before" job, the baseline, whose runner is built with the
/// MSBuild property <c>PumpBaselineVersion</c> (the benchmark project then references PriorityAsync and
/// PriorityAsync.MessagePump packed at an older commit under that version), and an "after" job built from the current
/// projects. BenchmarkDotNet builds one runner per job, so one run measures both builds and prints Ratio and Alloc Ratio
/// against the baseline. The version comes from the environment variable <see cref="VersionVariable"/>; without it
/// the suite selects no benchmark, so the ordinary runs and the CI smoke do not build or run it.
/// </summary>
public sealed class PumpBeforeAfterConfig : ManualConfig
{
    /// <summary>The environment variable that holds the packed libraries' version (benchmarks/compare-pump.sh sets it).</summary>
    public const string VersionVariable = "PUMP_BASELINE_VERSION";

    /// <summary>The MSBuild property the benchmark project reads to swap its project references for the packages.</summary>
    public const string VersionProperty = "PumpBaselineVersion";

    /// <summary>Initializes a new instance of the <see cref="PumpBeforeAfterConfig"/> class from the environment.</summary>
    public PumpBeforeAfterConfig()
        : this(Environment.GetEnvironmentVariable(VersionVariable))
    {
    }

    /// <summary>Initializes a new instance of the <see cref="PumpBeforeAfterConfig"/> class.</summary>
    /// <param name="baselineVersion">The packed libraries' version, or <see langword="null"/> or empty for no comparison.</param>
    /// <exception cref="ArgumentException">
    /// <paramref name="baselineVersion"/> holds a character other than a letter, digit, '.' or '-' (it becomes an MSBuild
    /// argument and a folder name).
    /// </exception>
    public PumpBeforeAfterConfig(string? baselineVersion)
    {
        if (string.IsNullOrEmpty(baselineVersion))
        {
            AddFilter(new SimpleFilter(_ => false));
            return;
        }

        if (!baselineVersion.All(c => char.IsAsciiLetterOrDigit(c) || c is '.' or '-'))
        {
            throw new ArgumentException(
                $"{VersionVariable} must be a package version of ASCII letters, digits, '.' and '-'; got '{baselineVersion}'.",
                nameof(baselineVersion));
        }

        BaselineVersion = baselineVersion;
        // BenchmarkDotNet applies the run's default job (BenchmarkConfig.Modest) over these two, so their run settings
        // are the modest job's (a WithIterationCount here does not survive it); they differ only in build and baseline.
        AddJob(BenchmarkConfig.Modest
            .WithArguments([new MsBuildArgument($"/p:{VersionProperty}={baselineVersion}")])
            .WithId("before")
            .AsBaseline());
        AddJob(BenchmarkConfig.Modest.WithId("after"));
        AddColumn(StatisticColumn.Median);
    }

    /// <summary>Gets the packed libraries' version of the "before" job, or <see langword="null"/> when the suite is off.</summary>
    public string? BaselineVersion { get; }
}
