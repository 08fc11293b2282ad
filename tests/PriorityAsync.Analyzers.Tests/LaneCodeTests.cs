using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;

namespace PriorityAsync.Analyzers.Tests;

/// <summary>What is lane code: each place the library runs user code in a lane, [LaneCode], and what is not (Thread.Sleep is the probe: PA0002).</summary>
public sealed class LaneCodeTests
{
    [Fact]
    public Task The_pumps_handler_is_lane_code() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            static PriorityMessagePump M(IMessageSource source, PriorityScheduler scheduler) =>
                new(source, (context, token) => { {|PA0002:Thread.Sleep(1)|}; return Task.CompletedTask; }, scheduler);
        }
        """);

    [Fact]
    public Task A_hosted_pumps_handlers_are_lane_code() => Verify.AnalyzerAsync(Verify.Usings + """
        using Microsoft.Extensions.DependencyInjection;
        using PriorityAsync.MessagePump.Hosting;

        static class C
        {
            static void M(IServiceCollection services, MessagePumpBuilder builder, IMessageSource source)
            {
                services.AddMessagePump(_ => source, (context, token) => { {|PA0002:Thread.Sleep(1)|}; return Task.CompletedTask; });
                builder.WithHandler((context, token) => { {|PA0002:Thread.Sleep(2)|}; return Task.CompletedTask; });
            }
        }
        """);

    [Fact]
    public Task An_IMessageHandler_is_lane_code() => Verify.AnalyzerAsync(Verify.Usings + """
        using PriorityAsync.MessagePump.Hosting;

        sealed class Handler : IMessageHandler
        {
            public Task HandleAsync(MessageContext context, CancellationToken cancellationToken)
            {
                {|PA0002:Thread.Sleep(1)|};
                return Task.CompletedTask;
            }

            public void NotTheHandler() => Thread.Sleep(1);
        }
        """);

    [Fact]
    public Task A_service_bus_processors_message_handler_is_lane_code() => Verify.AnalyzerAsync(Verify.Usings + """
        using PriorityAsync.MessagePump.AzureServiceBus;

        static class C
        {
            static void M(ServiceBusPumpProcessor processor) =>
                processor.ProcessMessageAsync += args => { {|PA0002:Thread.Sleep(1)|}; return Task.CompletedTask; };
        }
        """);

    [Fact]
    public Task Delegates_given_to_a_lane_and_the_single_thread_entries_are_lane_code() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            static async Task M(Lane lane, PriorityAsyncContext context, PriorityAsyncContextThread thread)
            {
                await lane.Run(() => {|PA0002:Thread.Sleep(1)|});
                await lane.Run(() => { {|PA0002:Thread.Sleep(2)|}; return Task.CompletedTask; });
                PriorityAsyncContext.Run(() => { {|PA0002:Thread.Sleep(3)|}; return Task.CompletedTask; });
                context.Execute(LanePriority.Processing, () => { {|PA0002:Thread.Sleep(4)|}; return Task.CompletedTask; });
                await thread.Context.GetLane(LanePriority.Processing).Run(() => { {|PA0002:Thread.Sleep(5)|}; return Task.CompletedTask; });
            }
        }
        """);

    [Fact]
    public Task Code_marked_LaneCode_is_lane_code() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            [LaneCode]
            static void Marked() => {|PA0002:Thread.Sleep(1)|};

            static void Unmarked()
            {
                Thread.Sleep(2);
                Action lambda = [LaneCode] () => {|PA0002:Thread.Sleep(3)|};
                Local();

                [LaneCode]
                static void Local() => {|PA0002:Thread.Sleep(4)|};
            }
        }

        [LaneCode]
        sealed class Marked
        {
            void M() => {|PA0002:Thread.Sleep(5)|};
        }
        """);

    [Fact]
    public Task A_lambda_inside_lane_code_runs_in_the_lane_but_one_given_to_the_thread_pool_does_not() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            static Task M(Lane lane, List<int> items) => lane.Run(() =>
            {
                items.ForEach(item => {|PA0002:Thread.Sleep(item)|});
                _ = {|PA0004:Task.Run(() => Thread.Sleep(1))|};
                new Thread(() => Thread.Sleep(2)).Start();
            });
        }
        """);

    [Fact]
    public Task Ordinary_code_is_not_lane_code() => Verify.AnalyzerAsync(Verify.Usings + """
        static class C
        {
            static async Task M(Task<int> task)
            {
                Thread.Sleep(1);
                _ = task.Result;
                await Task.Run(() => { }).ConfigureAwait(false);
                for (var i = 0; i < 10; i++)
                {
                    Console.WriteLine(i);
                }
            }
        }
        """);

    [Fact]
    public Task Code_that_does_not_reference_PriorityAsync_is_not_analyzed() => Verify.AnalyzerAsync(
        """
        using System.Threading;

        static class C
        {
            [PriorityAsync.LaneCode]
            static void M() => Thread.Sleep(1);
        }

        namespace PriorityAsync
        {
            // An attribute of the same name, without the library (no PriorityAsync.PriorityScheduler): nothing to check.
            sealed class LaneCodeAttribute : System.Attribute
            {
            }
        }
        """,
        withLibraries: false);

    [Fact]
    public Task Generated_code_is_skipped() => Verify.AnalyzerAsync("// <auto-generated/>\n" + Verify.Usings + """
        static class C
        {
            [LaneCode]
            static void M() => Thread.Sleep(1);
        }
        """);

    [Fact]
    public void The_analyzer_runs_concurrently_and_skips_generated_code()
    {
        var context = new RecordingAnalysisContext();
        new LaneRulesAnalyzer().Initialize(context);
        context.ConcurrentExecutionEnabled.Should().BeTrue();
        context.GeneratedCode.Should().Be(GeneratedCodeAnalysisFlags.None);
    }

    [Fact]
    public void Every_rule_is_a_warning_with_a_help_link_to_its_own_section()
    {
        var rules = new LaneRulesAnalyzer().SupportedDiagnostics;
        rules.Select(rule => rule.Id).Should().Equal("PA0001", "PA0002", "PA0003", "PA0004");
        rules.Should().OnlyContain(rule => rule.DefaultSeverity == DiagnosticSeverity.Warning && rule.IsEnabledByDefault);
        rules.Should().OnlyContain(rule => rule.HelpLinkUri.EndsWith("docs/analyzers.md#" + rule.Id.ToLowerInvariant(), StringComparison.Ordinal));
        var page = File.ReadAllText(Path.Combine(RepositoryRoot(), "docs", "analyzers.md"));
        rules.Should().OnlyContain(rule => page.Contains("\n## " + rule.Id + "\n", StringComparison.Ordinal));
    }

    private static string RepositoryRoot()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(Path.Combine(directory.FullName, "PriorityAsync.sln")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException("PriorityAsync.sln not found above " + AppContext.BaseDirectory);
    }

    private sealed class RecordingAnalysisContext : AnalysisContext
    {
        public bool ConcurrentExecutionEnabled { get; private set; }

        public GeneratedCodeAnalysisFlags? GeneratedCode { get; private set; }

        public override void EnableConcurrentExecution() => ConcurrentExecutionEnabled = true;

        public override void ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags analysisMode) => GeneratedCode = analysisMode;

        public override void RegisterCompilationStartAction(Action<CompilationStartAnalysisContext> action)
        {
        }

        public override void RegisterCodeBlockAction(Action<CodeBlockAnalysisContext> action) => throw new NotSupportedException();

        public override void RegisterCodeBlockStartAction<TLanguageKindEnum>(Action<CodeBlockStartAnalysisContext<TLanguageKindEnum>> action) => throw new NotSupportedException();

        public override void RegisterCompilationAction(Action<CompilationAnalysisContext> action) => throw new NotSupportedException();

        public override void RegisterSemanticModelAction(Action<SemanticModelAnalysisContext> action) => throw new NotSupportedException();

        public override void RegisterSymbolAction(Action<SymbolAnalysisContext> action, System.Collections.Immutable.ImmutableArray<SymbolKind> symbolKinds) => throw new NotSupportedException();

        public override void RegisterSyntaxNodeAction<TLanguageKindEnum>(Action<SyntaxNodeAnalysisContext> action, System.Collections.Immutable.ImmutableArray<TLanguageKindEnum> syntaxKinds) => throw new NotSupportedException();

        public override void RegisterSyntaxTreeAction(Action<SyntaxTreeAnalysisContext> action) => throw new NotSupportedException();
    }
}
