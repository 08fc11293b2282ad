using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;

namespace PriorityAsync.DocsCompile;

/// <summary>
/// Compiles a whole program (top-level statements) as a new console app's Program.cs would be: C# latest, nullable on,
/// the implicit usings of <c>dotnet new console</c>, against the assemblies this app runs on (the .NET runtime, the
/// packed PriorityAsync packages and Microsoft.Extensions.Hosting). Warnings count as errors.
/// </summary>
internal sealed class ProgramCompiler
{
    /// <summary>The global usings the .NET SDK adds to a console project (ImplicitUsings), and nothing more.</summary>
    public const string ConsoleImplicitUsings = """
        global using global::System;
        global using global::System.Collections.Generic;
        global using global::System.IO;
        global using global::System.Linq;
        global using global::System.Net.Http;
        global using global::System.Threading;
        global using global::System.Threading.Tasks;
        """;

    private static readonly CSharpParseOptions ParseOptions = new(LanguageVersion.Latest);

    private readonly ImmutableArray<MetadataReference> _references;

    public ProgramCompiler()
    {
        var trusted = ((string?)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES") ?? string.Empty)
            .Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries);
        _references = [.. trusted
            .Where(path => !Path.GetFileName(path).StartsWith("Microsoft.CodeAnalysis", StringComparison.Ordinal)
                && !Path.GetFileName(path).StartsWith("DocsCompile", StringComparison.Ordinal))
            .Select(path => (MetadataReference)MetadataReference.CreateFromFile(path))];
    }

    /// <summary>Compiles <paramref name="code"/>; returns the assembly, or the diagnostics that stop it.</summary>
    public (byte[]? Assembly, IReadOnlyList<string> Errors) Compile(string name, string code)
    {
        var compilation = CSharpCompilation.Create(
            name,
            [
                CSharpSyntaxTree.ParseText(code, ParseOptions, path: "Program.cs"),
                CSharpSyntaxTree.ParseText(ConsoleImplicitUsings, ParseOptions, path: "GlobalUsings.g.cs"),
            ],
            _references,
            new CSharpCompilationOptions(
                OutputKind.ConsoleApplication,
                nullableContextOptions: NullableContextOptions.Enable,
                optimizationLevel: OptimizationLevel.Release,
                generalDiagnosticOption: ReportDiagnostic.Error));
        using var output = new MemoryStream();
        var result = compilation.Emit(output);
        var errors = result.Diagnostics
            .Where(d => d.Severity == DiagnosticSeverity.Error)
            .Select(d => d.ToString())
            .ToList();
        return (result.Success && errors.Count == 0 ? output.ToArray() : null, errors);
    }
}
