using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.Operations;

namespace PriorityAsync.Analyzers;

/// <summary>
/// The types the rules know, found by their full metadata names in the compilation (the analyzers reference no
/// PriorityAsync assembly), and the questions asked of them: is this code lane code, does this loop yield.
/// </summary>
internal sealed class KnownSymbols
{
    private readonly INamedTypeSymbol? laneCodeAttribute;
    private readonly INamedTypeSymbol? lane;
    private readonly INamedTypeSymbol? priorityAsyncContext;
    private readonly INamedTypeSymbol? priorityAsyncContextThread;
    private readonly INamedTypeSymbol? priorityMessagePump;
    private readonly INamedTypeSymbol? messageContext;
    private readonly INamedTypeSymbol? messageHandler;
    private readonly INamedTypeSymbol? messagePumpBuilder;
    private readonly INamedTypeSymbol? messagePumpHostedService;
    private readonly INamedTypeSymbol? messagePumpServiceCollectionExtensions;
    private readonly INamedTypeSymbol? serviceBusPumpProcessor;
    private readonly INamedTypeSymbol? taskFactory;
    private readonly INamedTypeSymbol? taskFactoryOfT;
    private readonly INamedTypeSymbol? threadPool;
    private readonly INamedTypeSymbol? thread;
    private readonly INamedTypeSymbol? taskScheduler;

    private KnownSymbols(Compilation compilation, INamedTypeSymbol priorityScheduler)
    {
        PriorityScheduler = priorityScheduler;
        laneCodeAttribute = compilation.GetTypeByMetadataName("PriorityAsync.LaneCodeAttribute");
        lane = compilation.GetTypeByMetadataName("PriorityAsync.Lane");
        priorityAsyncContext = compilation.GetTypeByMetadataName("PriorityAsync.PriorityAsyncContext");
        priorityAsyncContextThread = compilation.GetTypeByMetadataName("PriorityAsync.PriorityAsyncContextThread");
        priorityMessagePump = compilation.GetTypeByMetadataName("PriorityAsync.MessagePump.PriorityMessagePump");
        messageContext = compilation.GetTypeByMetadataName("PriorityAsync.MessagePump.MessageContext");
        messageHandler = compilation.GetTypeByMetadataName("PriorityAsync.MessagePump.Hosting.IMessageHandler");
        messagePumpBuilder = compilation.GetTypeByMetadataName("PriorityAsync.MessagePump.Hosting.MessagePumpBuilder");
        messagePumpHostedService = compilation.GetTypeByMetadataName("PriorityAsync.MessagePump.Hosting.MessagePumpHostedService");
        messagePumpServiceCollectionExtensions = compilation.GetTypeByMetadataName("Microsoft.Extensions.DependencyInjection.MessagePumpServiceCollectionExtensions");
        serviceBusPumpProcessor = compilation.GetTypeByMetadataName("PriorityAsync.MessagePump.AzureServiceBus.ServiceBusPumpProcessor");
        Task = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task");
        TaskOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.Task`1");
        ValueTask = compilation.GetTypeByMetadataName("System.Threading.Tasks.ValueTask");
        ValueTaskOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.ValueTask`1");
        taskFactory = compilation.GetTypeByMetadataName("System.Threading.Tasks.TaskFactory");
        taskFactoryOfT = compilation.GetTypeByMetadataName("System.Threading.Tasks.TaskFactory`1");
        threadPool = compilation.GetTypeByMetadataName("System.Threading.ThreadPool");
        thread = compilation.GetTypeByMetadataName("System.Threading.Thread");
        taskScheduler = compilation.GetTypeByMetadataName("System.Threading.Tasks.TaskScheduler");
    }

    /// <summary>PriorityAsync.PriorityScheduler; its presence says the compilation uses PriorityAsync at all.</summary>
    public INamedTypeSymbol PriorityScheduler { get; }

    public INamedTypeSymbol? Task { get; }

    public INamedTypeSymbol? TaskOfT { get; }

    public INamedTypeSymbol? ValueTask { get; }

    public INamedTypeSymbol? ValueTaskOfT { get; }

    /// <summary>The known symbols of a compilation, or null when it does not reference PriorityAsync (nothing to check).</summary>
    public static KnownSymbols? Create(Compilation compilation)
    {
        var scheduler = compilation.GetTypeByMetadataName("PriorityAsync.PriorityScheduler");
        return scheduler is null ? null : new KnownSymbols(compilation, scheduler);
    }

    /// <summary>Whether <paramref name="type"/> is Task, Task&lt;T&gt;, ValueTask or ValueTask&lt;T&gt;.</summary>
    public bool IsTaskLike(ITypeSymbol? type)
    {
        if (type is not INamedTypeSymbol named)
        {
            return false;
        }

        var definition = named.OriginalDefinition;
        return Is(definition, Task) || Is(definition, TaskOfT) || Is(definition, ValueTask) || Is(definition, ValueTaskOfT);
    }

    /// <summary>
    /// Whether <paramref name="operation"/> runs in a lane: the innermost enclosing function that decides it is a lane
    /// entry (a handler or delegate the library runs in a lane, or marked [LaneCode]), or a method that is lane code
    /// (marked [LaneCode], itself or its type, or an IMessageHandler.HandleAsync). A delegate given to Task.Run and the
    /// like leaves the lane; any other lambda or local function runs where it is called, so the search goes on outward.
    /// </summary>
    public bool IsLaneCode(IOperation operation, ISymbol containingSymbol)
    {
        for (var current = operation.Parent; current is not null; current = current.Parent)
        {
            switch (current)
            {
                case IAnonymousFunctionOperation function:
                    if (HasLaneCodeAttribute(function.Symbol))
                    {
                        return true;
                    }

                    switch (ClassifyDelegate(function))
                    {
                        case DelegateTarget.Lane:
                            return true;
                        case DelegateTarget.ThreadPool:
                            return false;
                    }

                    break;
                case ILocalFunctionOperation localFunction when HasLaneCodeAttribute(localFunction.Symbol):
                    return true;
            }
        }

        return containingSymbol is IMethodSymbol method && IsLaneMethod(method);
    }

    /// <summary>Whether the property read is one of the library's should-yield checks.</summary>
    public bool IsShouldYieldCheck(IPropertySymbol property)
    {
        var type = property.ContainingType;
        return (property.Name == "ShouldYield" && (Is(type, PriorityScheduler) || Is(type, messageContext) || InheritsFrom(type, PriorityScheduler)))
            || (property.Name == "HasMoreUrgentWork" && Is(type, lane));
    }

    /// <summary>Whether the invocation sends work to the thread pool: Task.Run, a StartNew of a factory that is not a lane's, ThreadPool.QueueUserWorkItem.</summary>
    public bool IsThreadPoolDispatch(IInvocationOperation invocation)
    {
        var method = invocation.TargetMethod;
        var type = method.ContainingType?.OriginalDefinition;
        if (Is(type, Task) && method.IsStatic && method.Name == "Run")
        {
            return true;
        }

        if ((Is(type, threadPool)) && method.Name is "QueueUserWorkItem" or "UnsafeQueueUserWorkItem")
        {
            return true;
        }

        if ((Is(type, taskFactory) || Is(type, taskFactoryOfT)) && method.Name == "StartNew")
        {
            return !IsLaneTaskFactory(invocation.Instance) && !HasNonDefaultScheduler(invocation);
        }

        return false;
    }

    private enum DelegateTarget
    {
        Unknown,
        Lane,
        ThreadPool,
    }

    private DelegateTarget ClassifyDelegate(IAnonymousFunctionOperation function)
    {
        IOperation current = function;
        while (current.Parent is IDelegateCreationOperation or IConversionOperation)
        {
            current = current.Parent;
        }

        switch (current.Parent)
        {
            case IArgumentOperation { Parameter: { } parameter } argument:
                return argument.Parent switch
                {
                    IInvocationOperation invocation => ClassifyInvocationArgument(invocation, parameter),
                    IObjectCreationOperation creation => ClassifyCreationArgument(creation, parameter),
                    _ => DelegateTarget.Unknown,
                };
            case IEventAssignmentOperation { Adds: true } assignment
                when assignment.EventReference is IEventReferenceOperation { Event: { Name: "ProcessMessageAsync" } handlerEvent }
                && Is(handlerEvent.ContainingType, serviceBusPumpProcessor):
                return DelegateTarget.Lane;
            default:
                return DelegateTarget.Unknown;
        }
    }

    private DelegateTarget ClassifyInvocationArgument(IInvocationOperation invocation, IParameterSymbol parameter)
    {
        var method = invocation.TargetMethod;
        var type = method.ContainingType?.OriginalDefinition;
        if ((Is(type, lane) && method.Name == "Run")
            || (Is(type, priorityAsyncContext) && method.Name is "Run" or "Execute")
            || (Is(type, priorityAsyncContextThread) && method.Name == "RunAsync")
            || (Is(type, messagePumpBuilder) && method.Name == "WithHandler")
            || (Is(type, messagePumpServiceCollectionExtensions) && method.Name == "AddMessagePump" && parameter.Name == "handler"))
        {
            return DelegateTarget.Lane;
        }

        if ((Is(type, taskFactory) || Is(type, taskFactoryOfT)) && method.Name is "StartNew" or "ContinueWhenAll" or "ContinueWhenAny")
        {
            return IsLaneTaskFactory(invocation.Instance) ? DelegateTarget.Lane
                : HasNonDefaultScheduler(invocation) ? DelegateTarget.Unknown
                : DelegateTarget.ThreadPool;
        }

        return IsThreadPoolDispatch(invocation) ? DelegateTarget.ThreadPool : DelegateTarget.Unknown;
    }

    private DelegateTarget ClassifyCreationArgument(IObjectCreationOperation creation, IParameterSymbol parameter)
    {
        var type = creation.Type?.OriginalDefinition;
        if ((Is(type, priorityMessagePump) || Is(type, messagePumpHostedService)) && parameter.Name == "handler")
        {
            return DelegateTarget.Lane;
        }

        return Is(type, thread) ? DelegateTarget.ThreadPool : DelegateTarget.Unknown;
    }

    private bool IsLaneMethod(IMethodSymbol method)
    {
        if (HasLaneCodeAttribute(method))
        {
            return true;
        }

        for (var type = method.ContainingType; type is not null; type = type.ContainingType)
        {
            if (HasLaneCodeAttribute(type))
            {
                return true;
            }
        }

        if (messageHandler is null || method.Name != "HandleAsync" || method.ContainingType is null)
        {
            return false;
        }

        foreach (var member in messageHandler.GetMembers("HandleAsync"))
        {
            if (SymbolEqualityComparer.Default.Equals(method.ContainingType.FindImplementationForInterfaceMember(member), method))
            {
                return true;
            }
        }

        return false;
    }

    private bool HasLaneCodeAttribute(ISymbol symbol)
    {
        if (laneCodeAttribute is null)
        {
            return false;
        }

        foreach (var attribute in symbol.GetAttributes())
        {
            if (Is(attribute.AttributeClass, laneCodeAttribute))
            {
                return true;
            }
        }

        return false;
    }

    private bool IsLaneTaskFactory(IOperation? instance) =>
        instance is IPropertyReferenceOperation { Property.Name: "TaskFactory" } reference && Is(reference.Property.ContainingType, lane);

    /// <summary>A StartNew/ContinueWhen* given a TaskScheduler other than TaskScheduler.Default runs where that scheduler says.</summary>
    private bool HasNonDefaultScheduler(IInvocationOperation invocation)
    {
        foreach (var argument in invocation.Arguments)
        {
            if (argument.Parameter is null || !Is(argument.Parameter.Type, taskScheduler) || argument.ArgumentKind == ArgumentKind.DefaultValue)
            {
                continue;
            }

            var value = argument.Value;
            while (value is IConversionOperation conversion)
            {
                value = conversion.Operand;
            }

            return !(value is IPropertyReferenceOperation { Property: { Name: "Default", IsStatic: true } property } && Is(property.ContainingType, taskScheduler));
        }

        return false;
    }

    private static bool InheritsFrom(INamedTypeSymbol? type, INamedTypeSymbol baseType)
    {
        for (var current = type?.BaseType; current is not null; current = current.BaseType)
        {
            if (Is(current, baseType))
            {
                return true;
            }
        }

        return false;
    }

    public static bool Is(ITypeSymbol? type, ITypeSymbol? known) =>
        type is not null && known is not null && SymbolEqualityComparer.Default.Equals(type, known);
}
