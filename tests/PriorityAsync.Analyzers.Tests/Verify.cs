using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Testing;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Testing;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>
/// Runs the analyzers (and a code fix) on a case compiled against this process's own runtime and the real PriorityAsync
/// libraries (no reference-assembly download): the full metadata names the analyzers know are checked against the
/// types they name. Markup: <c>{|PA0001:for|}</c> marks the span of an expected report.
/// </summary>
internal static class Verify
{
    /// <summary>The usings every case starts with; a case's own code follows them.</summary>
    public const string Usings = """
        using System;
        using System.Collections.Generic;
        using System.Threading;
        using System.Threading.Tasks;
        using PriorityAsync;
        using PriorityAsync.MessagePump;

        """;

    private static readonly ImmutableArray<MetadataReference> References = LoadReferences(withLibraries: true);

    private static readonly ImmutableArray<MetadataReference> RuntimeReferences = LoadReferences(withLibraries: false);

    /// <summary>
    /// Checks that <paramref name="source"/> gets exactly the reports its markup marks; compiled against the runtime
    /// only (no PriorityAsync assembly) where <paramref name="withLibraries"/> is false.
    /// </summary>
    public static async Task AnalyzerAsync(string source, bool withLibraries = true)
    {
        var test = new AnalyzerTest(withLibraries ? References : RuntimeReferences) { TestCode = source };
        await test.RunAsync();
    }

    /// <summary>Checks the reports <paramref name="source"/>'s markup marks, then that the fix turns it into <paramref name="fixedSource"/>.</summary>
    public static async Task CodeFixAsync<TCodeFix>(string source, string fixedSource)
        where TCodeFix : CodeFixProvider, new()
    {
        var test = new CodeFixTest<TCodeFix> { TestCode = source, FixedCode = fixedSource };
        await test.RunAsync();
    }

    private static ImmutableArray<MetadataReference> LoadReferences(bool withLibraries)
    {
        var paths = ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator)
            .Where(path => withLibraries || !Path.GetFileName(path).StartsWith("PriorityAsync", StringComparison.Ordinal))
            .Concat(withLibraries ? (string[])
            [
                typeof(PriorityScheduler).Assembly.Location,
                typeof(PriorityAsync.MessagePump.PriorityMessagePump).Assembly.Location,
                typeof(PriorityAsync.MessagePump.Hosting.IMessageHandler).Assembly.Location,
                typeof(PriorityAsync.MessagePump.AzureServiceBus.ServiceBusPumpProcessor).Assembly.Location,
                typeof(Azure.Messaging.ServiceBus.ServiceBusClient).Assembly.Location,
            ] : [])
            .Where(path => path.EndsWith(".dll", StringComparison.OrdinalIgnoreCase))
            .Distinct(StringComparer.Ordinal);
        return [.. paths.Select(path => (MetadataReference)MetadataReference.CreateFromFile(path))];
    }

    private static void Configure(SolutionState state, ImmutableArray<MetadataReference> references)
    {
        // No reference-assembly package: the references are this process's own assemblies (above).
        state.AdditionalReferences.AddRange(references);
    }

    private sealed class AnalyzerTest : CSharpAnalyzerTest<LaneRulesAnalyzer, DefaultVerifier>
    {
        public AnalyzerTest(ImmutableArray<MetadataReference> references)
        {
            ReferenceAssemblies = new ReferenceAssemblies("net10.0");
            Configure(TestState, references);
        }

        protected override ParseOptions CreateParseOptions() => new CSharpParseOptions(LanguageVersion.Latest, DocumentationMode.Diagnose);

        protected override CompilationOptions CreateCompilationOptions() =>
            ((CSharpCompilationOptions)base.CreateCompilationOptions()).WithNullableContextOptions(NullableContextOptions.Enable);
    }

    private sealed class CodeFixTest<TCodeFix> : CSharpCodeFixTest<LaneRulesAnalyzer, TCodeFix, DefaultVerifier>
        where TCodeFix : CodeFixProvider, new()
    {
        public CodeFixTest()
        {
            ReferenceAssemblies = new ReferenceAssemblies("net10.0");
            Configure(TestState, References);
            Configure(FixedState, References);
        }

        protected override ParseOptions CreateParseOptions() => new CSharpParseOptions(LanguageVersion.Latest, DocumentationMode.Diagnose);

        protected override CompilationOptions CreateCompilationOptions() =>
            ((CSharpCompilationOptions)base.CreateCompilationOptions()).WithNullableContextOptions(NullableContextOptions.Enable);
    }
}
