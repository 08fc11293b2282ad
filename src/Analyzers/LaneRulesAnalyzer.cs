using System.Collections.Generic;
using System.Collections.Immutable;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Diagnostics;
using Microsoft.CodeAnalysis.Operations;

namespace PriorityAsync.Analyzers;

/// <summary>
/// Checks the one rule in lane code (docs/analyzers.md): loops that never yield (PA0001), blocking on asynchronous work
/// (PA0002), ConfigureAwait(false) (PA0003) and work sent to the thread pool (PA0004).
/// </summary>
[DiagnosticAnalyzer(LanguageNames.CSharp)]
public sealed class LaneRulesAnalyzer : DiagnosticAnalyzer
{
    /// <summary>The diagnostic property that says whether the code around a report is in an async function ("true"/"false").</summary>
    public const string AsyncProperty = "Async";

    /// <summary>The diagnostic property that names the PA0002 code fix's kind (see <see cref="BlockingKind"/>); absent when there is none.</summary>
    public const string BlockingKindProperty = "BlockingKind";

    /// <inheritdoc />
    public override ImmutableArray<DiagnosticDescriptor> SupportedDiagnostics { get; } = ImmutableArray.Create(
        Descriptors.LoopWithoutYield, Descriptors.Blocking, Descriptors.ConfigureAwaitFalse, Descriptors.ThreadPool);

    /// <inheritdoc />
    public override void Initialize(AnalysisContext context)
    {
        context.ConfigureGeneratedCodeAnalysis(GeneratedCodeAnalysisFlags.None);
        context.EnableConcurrentExecution();
        context.RegisterCompilationStartAction(start =>
        {
            var known = KnownSymbols.Create(start.Compilation);
            if (known is null)
            {
                return;
            }

            start.RegisterOperationAction(c => AnalyzeLoop(c, known), OperationKind.Loop);
            start.RegisterOperationAction(c => AnalyzeInvocation(c, known), OperationKind.Invocation);
            start.RegisterOperationAction(c => AnalyzePropertyReference(c, known), OperationKind.PropertyReference);
        });
    }

    private static void AnalyzeLoop(OperationAnalysisContext context, KnownSymbols known)
    {
        var loop = (ILoopOperation)context.Operation;
        if (loop is IForEachLoopOperation { IsAsynchronous: true } || HasEnclosingLoop(loop) || Yields(loop, known)
            || !known.IsLaneCode(loop, context.ContainingSymbol))
        {
            return;
        }

        var properties = ImmutableDictionary<string, string?>.Empty.Add(AsyncProperty, IsInAsyncFunction(loop, context.ContainingSymbol) ? "true" : "false");
        context.ReportDiagnostic(Diagnostic.Create(Descriptors.LoopWithoutYield, loop.Syntax.GetFirstToken().GetLocation(), properties));
    }

    private static void AnalyzeInvocation(OperationAnalysisContext context, KnownSymbols known)
    {
        var invocation = (IInvocationOperation)context.Operation;
        var method = invocation.TargetMethod;
        var type = method.ContainingType?.OriginalDefinition;

        if (method.Name == "ConfigureAwait" && IsConfigureAwaitFalse(invocation, known))
        {
            if (known.IsLaneCode(invocation, context.ContainingSymbol))
            {
                context.ReportDiagnostic(Diagnostic.Create(Descriptors.ConfigureAwaitFalse, invocation.Syntax.GetLocation()));
            }

            return;
        }

        if (known.IsThreadPoolDispatch(invocation))
        {
            if (known.IsLaneCode(invocation, context.ContainingSymbol))
            {
                context.ReportDiagnostic(Diagnostic.Create(Descriptors.ThreadPool, invocation.Syntax.GetLocation(), $"{method.ContainingType!.Name}.{method.Name}"));
            }

            return;
        }

        string? name = null;
        string? fix = null;
        string advice;
        if (KnownSymbols.Is(type, known.Task) && !method.IsStatic && method.Name == "Wait")
        {
            name = "Task.Wait()";
            fix = method.Parameters.Length == 0 ? BlockingKind.AwaitInstance : null;
            advice = "await the task instead";
        }
        else if (KnownSymbols.Is(type, known.Task) && method.IsStatic && method.Name is "WaitAll" or "WaitAny")
        {
            name = $"Task.{method.Name}";
            fix = method.Name == "WaitAll" && method.Parameters.Length == 1 ? BlockingKind.WhenAll : null;
            advice = method.Name == "WaitAll" ? "await Task.WhenAll(...) instead" : "await Task.WhenAny(...) instead";
        }
        else if (method.Name == "GetResult" && method.Parameters.Length == 0
            && invocation.Instance is IInvocationOperation { TargetMethod.Name: "GetAwaiter" } getAwaiter
            && getAwaiter.Instance is { } awaited && (known.IsTaskLike(awaited.Type) || IsConfiguredAwaitable(awaited.Type)))
        {
            name = "GetAwaiter().GetResult()";
            fix = BlockingKind.AwaitAwaiterSource;
            advice = "await the task instead";
        }
        else if (method.IsStatic && method.Name == "Sleep" && KnownSymbols.Is(type, context.Compilation.GetTypeByMetadataName("System.Threading.Thread")))
        {
            name = "Thread.Sleep";
            fix = BlockingKind.Delay;
            advice = "await Task.Delay(...) instead (with the scheduler's TimeProvider where virtual time matters)";
        }
        else
        {
            return;
        }

        ReportBlocking(context, known, invocation, name, fix, advice);
    }

    private static void AnalyzePropertyReference(OperationAnalysisContext context, KnownSymbols known)
    {
        var reference = (IPropertyReferenceOperation)context.Operation;
        if (reference.Property.Name != "Result" || reference.Instance is null || !known.IsTaskLike(reference.Property.ContainingType)
            || reference.Parent is ISimpleAssignmentOperation assignment && assignment.Target == reference)
        {
            return;
        }

        ReportBlocking(context, known, reference, ".Result", BlockingKind.AwaitInstance, "await the task instead");
    }

    private static void ReportBlocking(OperationAnalysisContext context, KnownSymbols known, IOperation operation, string name, string? fix, string advice)
    {
        if (!known.IsLaneCode(operation, context.ContainingSymbol))
        {
            return;
        }

        var isAsync = IsInAsyncFunction(operation, context.ContainingSymbol);
        var properties = ImmutableDictionary<string, string?>.Empty.Add(AsyncProperty, isAsync ? "true" : "false");
        if (fix is not null && isAsync)
        {
            properties = properties.Add(BlockingKindProperty, fix);
        }

        context.ReportDiagnostic(Diagnostic.Create(Descriptors.Blocking, operation.Syntax.GetLocation(), properties, name, advice));
    }

    private static bool IsConfigureAwaitFalse(IInvocationOperation invocation, KnownSymbols known)
    {
        var receiver = invocation.Instance?.Type ?? (invocation.TargetMethod.IsExtensionMethod && invocation.Arguments.Length > 0 ? invocation.Arguments[0].Value.Type : null);
        var ns = invocation.TargetMethod.ContainingNamespace?.ToDisplayString();
        if (ns != "System.Threading.Tasks" && !known.IsTaskLike(receiver))
        {
            return false;
        }

        foreach (var argument in invocation.Arguments)
        {
            if (argument.Parameter is null || argument.Parameter.Ordinal != (invocation.TargetMethod.IsExtensionMethod ? 1 : 0))
            {
                continue;
            }

            var constant = argument.Value.ConstantValue;
            if (!constant.HasValue)
            {
                return false;
            }

            return constant.Value switch
            {
                bool continueOnCapturedContext => !continueOnCapturedContext,
                // ConfigureAwaitOptions: ContinueOnCapturedContext is 1.
                int options => (options & 1) == 0,
                _ => false,
            };
        }

        return false;
    }

    private static bool IsConfiguredAwaitable(ITypeSymbol? type) =>
        type is INamedTypeSymbol { Name: "ConfiguredTaskAwaitable" or "ConfiguredValueTaskAwaitable" } named
        && named.ContainingNamespace?.ToDisplayString() == "System.Runtime.CompilerServices";

    private static bool HasEnclosingLoop(IOperation operation)
    {
        for (var current = operation.Parent; current is not null; current = current.Parent)
        {
            switch (current)
            {
                case ILoopOperation:
                    return true;
                case IAnonymousFunctionOperation or ILocalFunctionOperation:
                    return false;
            }
        }

        return false;
    }

    /// <summary>Whether the loop (its condition or its body, not counting nested functions) awaits, yields or checks ShouldYield.</summary>
    private static bool Yields(ILoopOperation loop, KnownSymbols known)
    {
        var pending = new Stack<IOperation>();
        pending.Push(loop);
        while (pending.Count > 0)
        {
            var operation = pending.Pop();
            switch (operation)
            {
                case IAwaitOperation:
                case IForEachLoopOperation { IsAsynchronous: true }:
                case IUsingOperation { IsAsynchronous: true }:
                case IUsingDeclarationOperation { IsAsynchronous: true }:
                case IReturnOperation { Kind: OperationKind.YieldReturn }:
                    return true;
                case IPropertyReferenceOperation reference when known.IsShouldYieldCheck(reference.Property):
                    return true;
                case IAnonymousFunctionOperation or ILocalFunctionOperation:
                    continue;
            }

            foreach (var child in operation.ChildOperations)
            {
                pending.Push(child);
            }
        }

        return false;
    }

    private static bool IsInAsyncFunction(IOperation operation, ISymbol containingSymbol)
    {
        for (var current = operation.Parent; current is not null; current = current.Parent)
        {
            switch (current)
            {
                case IAnonymousFunctionOperation function:
                    return function.Symbol.IsAsync;
                case ILocalFunctionOperation localFunction:
                    return localFunction.Symbol.IsAsync;
            }
        }

        return containingSymbol is IMethodSymbol { IsAsync: true };
    }
}
