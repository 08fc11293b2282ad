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
using Microsoft.CodeAnalysis.Simplification;

namespace PriorityAsync.Analyzers;

/// <summary>
/// PA0002's fix, in async functions where an await form exists: <c>t.Result</c>, <c>t.Wait()</c> and
/// <c>t.GetAwaiter().GetResult()</c> become <c>await t</c>, <c>Task.WaitAll(ts)</c> becomes
/// <c>await Task.WhenAll(ts)</c>, <c>Thread.Sleep(x)</c> becomes <c>await Task.Delay(x)</c>.
/// </summary>
[ExportCodeFixProvider(LanguageNames.CSharp, Name = nameof(BlockingCodeFix))]
[Shared]
public sealed class BlockingCodeFix : CodeFixProvider
{
    /// <summary>The title of the fix.</summary>
    public const string Title = "Await instead of blocking";

    /// <inheritdoc />
    public override ImmutableArray<string> FixableDiagnosticIds { get; } = ImmutableArray.Create(Descriptors.BlockingId);

    /// <inheritdoc />
    public override FixAllProvider GetFixAllProvider() => WellKnownFixAllProviders.BatchFixer;

    /// <inheritdoc />
    public override async Task RegisterCodeFixesAsync(CodeFixContext context)
    {
        var root = await context.Document.GetSyntaxRootAsync(context.CancellationToken).ConfigureAwait(false);
        foreach (var diagnostic in context.Diagnostics)
        {
            if (root is null || !diagnostic.Properties.TryGetValue(LaneRulesAnalyzer.BlockingKindProperty, out var kind) || kind is null)
            {
                continue;
            }

            var node = root.FindNode(diagnostic.Location.SourceSpan, getInnermostNodeForTie: true);
            if (node is not ExpressionSyntax expression || Replacement(expression, kind) is null)
            {
                continue;
            }

            context.RegisterCodeFix(
                CodeAction.Create(Title, token => FixAsync(context.Document, expression, kind, token), equivalenceKey: Title),
                diagnostic);
        }
    }

    private static async Task<Document> FixAsync(Document document, ExpressionSyntax expression, string kind, CancellationToken cancellationToken)
    {
        var root = await document.GetSyntaxRootAsync(cancellationToken).ConfigureAwait(false);
        var awaited = Replacement(expression, kind);
        if (root is null || awaited is null)
        {
            return document;
        }

        ExpressionSyntax replacement = SyntaxFactory.AwaitExpression(awaited.WithoutTrivia());
        if (expression.Parent is not ExpressionStatementSyntax and not EqualsValueClauseSyntax and not ArgumentSyntax and not ReturnStatementSyntax)
        {
            replacement = SyntaxFactory.ParenthesizedExpression(replacement).WithAdditionalAnnotations(Simplifier.Annotation);
        }

        return document.WithSyntaxRoot(root.ReplaceNode(expression, replacement.WithTriviaFrom(expression)));
    }

    /// <summary>The expression to await in place of <paramref name="expression"/>, or null where the form is not the one expected.</summary>
    private static ExpressionSyntax? Replacement(ExpressionSyntax expression, string kind)
    {
        switch (kind)
        {
            case BlockingKind.AwaitInstance:
                return expression switch
                {
                    MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Result" } result => result.Expression,
                    InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax { Name.Identifier.ValueText: "Wait" } wait } => wait.Expression,
                    _ => null,
                };
            case BlockingKind.AwaitAwaiterSource:
                return expression is InvocationExpressionSyntax
                {
                    Expression: MemberAccessExpressionSyntax { Expression: InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax getAwaiter } },
                }
                    ? getAwaiter.Expression
                    : null;
            case BlockingKind.WhenAll:
                return expression is InvocationExpressionSyntax { Expression: MemberAccessExpressionSyntax waitAll } invocation
                    ? invocation.WithExpression(waitAll.WithName(SyntaxFactory.IdentifierName("WhenAll").WithTriviaFrom(waitAll.Name)))
                    : null;
            case BlockingKind.Delay:
                return expression is InvocationExpressionSyntax sleep
                    ? SyntaxFactory.InvocationExpression(
                        SyntaxFactory.MemberAccessExpression(
                            SyntaxKind.SimpleMemberAccessExpression,
                            SyntaxFactory.ParseTypeName("System.Threading.Tasks.Task").WithAdditionalAnnotations(Simplifier.Annotation),
                            SyntaxFactory.IdentifierName("Delay")),
                        sleep.ArgumentList)
                    : null;
            default:
                return null;
        }
    }
}
