using BenchmarkDotNet.Characteristics;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains;
using BenchmarkDotNet.Toolchains.CsProj;
using BenchmarkDotNet.Toolchains.DotNetCli;
using BenchmarkDotNet.Validators;

namespace PriorityAsync.Benchmarks.Infrastructure;

/// <summary>
/// BenchmarkDotNet 0.14.0's csproj toolchain for net10.0, minus one check it cannot pass on .NET 10: it looks for an
/// SDK whose version starts with the runtime moniker's ("9.0" for the stand-in of <see cref="BenchmarkConfig"/>), and
/// this machine has the .NET 10 SDK. Every other check of the csproj toolchain still runs.
/// </summary>
public sealed class Net10Toolchain : Toolchain
{
    private readonly IToolchain _inner;

    private Net10Toolchain(IToolchain inner)
        : base(".NET 10.0", inner.Generator, inner.Builder, inner.Executor)
    {
        _inner = inner;
    }

    /// <summary>Gets the toolchain.</summary>
    public static Net10Toolchain Instance { get; } =
        new(CsProjCoreToolchain.From(new NetCoreAppSettings("net10.0", runtimeFrameworkVersion: null!, name: ".NET 10.0")));

    /// <inheritdoc />
    public override IEnumerable<ValidationError> Validate(BenchmarkCase benchmarkCase, IResolver resolver) =>
        _inner.Validate(benchmarkCase, resolver)
            .Where(error => !error.Message.StartsWith("The required .NET Core SDK version", StringComparison.Ordinal));
}
