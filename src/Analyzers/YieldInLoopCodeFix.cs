using System.Collections.Immutable;
using System.Composition;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CodeActions;
using Microsoft.CodeAnalysis.CodeFixes;
using Microsoft.CodeAnalysis.CSharp;
using Microsoft.CodeAnalysis.CSharp.Syntax;
using Microsoft.CodeAnalysis.Editing;
using Microsoft.CodeAnalysis.Formatting;
using Microsoft.CodeAnalysis.Simplification;

namespace PriorityAsync.Analyzers;

/// <summary>
/// PA0001's fix: <c>await PriorityScheduler.YieldIfNeeded();</c> at the end of the loop's body; where the function is not
/// async, a <c>ShouldYield</c> check whose body (how to end the slice) is the user's to write.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(YieldInLoopCodeFix))]
[Shared]
public sealed class YieldInLoopCodeFix : CodeFixProvider
{
    /// <summary>The title of the fix in an async function.</summary>
    public const string AwaitTitle = "Await PriorityScheduler.YieldIfNeeded() at the end of the loop's body";

    /// <summary>The title of the fix in a function that is not async.</summary>
    public const string CheckTitle = "Check PriorityScheduler.Current.ShouldYield at the end of the loop's body";

    /// <inheritdoc />
    public override ImmutableArray<string> FixableDiagnosticIds { get; } = ImmutableArray.Create(Descriptors.LoopWithoutYieldId);

    /// <inheritdoc />
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    /// <inheritdoc />
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        var root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        foreach (var diagnostic in context.Diagnostics)
        {
            var loop = root?.FindToken(diagnostic.Location.SourceSpan.Start).Parent?.AncestorsAndSelf().OfType<StatementSyntax>().FirstOrDefault(IsLoop);
            if (loop is null)
            {
                continue;
            }

            var isAsync = diagnostic.Properties.TryGetValue(LaneRulesAnalyzer.AsyncProperty, out var value) && value == "true";
            var title = isAsync ? AwaitTitle : CheckTitle;
            context.RegisterCodeFix(
                CodeAction.Create(title, token => AddYieldAsync(context.Document, loop, isAsync, token), equivalenceKey: title),
                diagnostic);
        }
    }

    private static bool IsLoop(StatementSyntax statement) =>
        statement is ForStatementSyntax or CommonForEachStatementSyntax or WhileStatementSyntax or DoStatementSyntax;

    private static async Task<Document> AddYieldAsync(Document document, StatementSyntax loop, bool isAsync, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        if (root is null)
        {
            return document;
        }

        var body = loop switch
        {
            ForStatementSyntax f => f.Statement,
            CommonForEachStatementSyntax f => f.Statement,
            WhileStatementSyntax w => w.Statement,
            DoStatementSyntax d => d.Statement,
            _ => null,
        };
        if (body is null)
        {
            return document;
        }

        StatementSyntax yieldStatement = isAsync ? AwaitYieldIfNeeded() : ShouldYieldCheck();
        var newBody = body is BlockSyntax block
            ? block.AddStatements(yieldStatement)
            : SyntaxFactory.Block(body.WithoutTrivia(), yieldStatement).WithTriviaFrom(body);
        var newRoot = root.ReplaceNode(body, newBody.WithAdditionalAnnotations(Formatter.Annotation));
        var changed = document.WithSyntaxRoot(newRoot);
        changed = await ImportAdder.AddImportsAsync(changed, Simplifier.AddImportsAnnotation, cancellationToken: cancellationToken).ConfigureAwait(false);
        changed = await Simplifier.ReduceAsync(changed, Simplifier.Annotation, cancellationToken: cancellationToken).ConfigureAwait(false);
        return await Formatter.FormatAsync(changed, Formatter.Annotation, cancellationToken: cancellationToken).ConfigureAwait(false);
    }

    private static ExpressionStatementSyntax AwaitYieldIfNeeded() =>
        SyntaxFactory.ExpressionStatement(SyntaxFactory.AwaitExpression(SyntaxFactory.InvocationExpression(
            SyntaxFactory.MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, SchedulerType(), SyntaxFactory.IdentifierName("YieldIfNeeded")))))
            .WithAdditionalAnnotations(Formatter.Annotation);

    private static IfStatementSyntax ShouldYieldCheck()
    {
        // PriorityScheduler.Current?.ShouldYield == true
        var condition = SyntaxFactory.BinaryExpression(
            SyntaxKind.EqualsExpression,
            SyntaxFactory.ConditionalAccessExpression(
                SyntaxFactory.MemberAccessExpression(SyntaxKind.SimpleMemberAccessExpression, SchedulerType(), SyntaxFactory.IdentifierName("Current")),
                SyntaxFactory.MemberBindingExpression(SyntaxFactory.IdentifierName("ShouldYield"))),
            SyntaxFactory.LiteralExpression(SyntaxKind.TrueLiteralExpression));
        var comment = SyntaxFactory.Comment("// A more urgent lane has work: end this slice here and continue the rest in a new work item of this lane.");
        var body = SyntaxFactory.Block().WithCloseBraceToken(
            SyntaxFactory.Token(SyntaxFactory.TriviaList(comment, SyntaxFactory.ElasticCarriageReturnLineFeed), SyntaxKind.CloseBraceToken, SyntaxFactory.TriviaList()));
        return SyntaxFactory.IfStatement(condition, body).WithAdditionalAnnotations(Formatter.Annotation);
    }

    /// <summary><c>PriorityAsync.PriorityScheduler</c>, reduced to <c>PriorityScheduler</c> with a using directive added where needed.</summary>
    internal static TypeSyntax SchedulerType() =>
        SyntaxFactory.QualifiedName(SyntaxFactory.IdentifierName("PriorityAsync"), SyntaxFactory.IdentifierName("PriorityScheduler"))
            .WithAdditionalAnnotations(Simplifier.Annotation, Simplifier.AddImportsAnnotation);
}
