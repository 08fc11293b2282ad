using Microsoft.CodeAnalysis;

namespace PriorityAsync.Analyzers;

/// <summary>The rules of the one rule (docs/analyzers.md): each an ID, a title that says what goes wrong, a help link.</summary>
internal static class Descriptors
{
    /// <summary>The category of every rule.</summary>
    public const string Category = "PriorityAsync";

    /// <summary>PA0001: a loop in lane code that can run on without yielding.</summary>
    public const string LoopWithoutYieldId = "PA0001";

    /// <summary>PA0002: blocking on asynchronous work in lane code.</summary>
    public const string BlockingId = "PA0002";

    /// <summary>PA0003: ConfigureAwait(false) in lane code.</summary>
    public const string ConfigureAwaitFalseId = "PA0003";

    /// <summary>PA0004: Task.Run, Task.Factory.StartNew, ThreadPool.QueueUserWorkItem from lane code.</summary>
    public const string ThreadPoolId = "PA0004";

    private const string HelpBase = "https://github.com/PriorityAsync/PriorityAsync/blob/main/docs/analyzers.md#";

    public static readonly DiagnosticDescriptor LoopWithoutYield = new(
        LoopWithoutYieldId,
        "A loop in lane code never yields: it holds the thread while more urgent lanes wait",
        "This loop in lane code can run on without reaching an await: more urgent work (lease renewals, settlements) waits until it ends; await PriorityScheduler.YieldIfNeeded() between chunks",
        Category,
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "Priorities decide which slice runs next; nothing interrupts the one that is running. A loop that does CPU work without an await (or a ShouldYield check) keeps every more urgent lane waiting until it ends. A loop inside an outer loop that yields on each iteration is a chunk and is not reported.",
        helpLinkUri: HelpBase + "pa0001");

    public static readonly DiagnosticDescriptor Blocking = new(
        BlockingId,
        "Blocking on asynchronous work in lane code holds the lane's thread",
        "'{0}' blocks the lane's thread until the work completes: nothing else runs on it meanwhile, and on a single-thread scheduler it deadlocks when the work needs that thread; {1}",
        Category,
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "Task.Result, Task.Wait(), GetAwaiter().GetResult(), Task.WaitAll/WaitAny and Thread.Sleep hold the thread: the scheduler cannot run more urgent work on it, and work that has to continue on that thread never gets it.",
        helpLinkUri: HelpBase + "pa0002");

    public static readonly DiagnosticDescriptor ConfigureAwaitFalse = new(
        ConfigureAwaitFalseId,
        "ConfigureAwait(false) in lane code moves the rest of the method out of its lane",
        "ConfigureAwait(false) resumes the rest of the method on the thread pool, outside the scheduler's priorities; remove it to stay in the lane",
        Category,
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "A lane is a SynchronizationContext and a TaskScheduler: an await stays in its lane because it captures them. ConfigureAwait(false) drops them, so the rest of the method runs on the thread pool, competing with nothing the scheduler knows about.",
        helpLinkUri: HelpBase + "pa0003");

    public static readonly DiagnosticDescriptor ThreadPool = new(
        ThreadPoolId,
        "Work sent to the thread pool from lane code leaves the scheduler",
        "'{0}' runs the work on the thread pool, outside the scheduler's lanes and priorities; run it in a lane instead: PriorityScheduler.CurrentLane!.Run(...) for the current lane, or scheduler[priority].Run(...)",
        Category,
        DiagnosticSeverity.Warning,
        isEnabledByDefault: true,
        description: "Task.Run, Task.Factory.StartNew and ThreadPool.QueueUserWorkItem queue the work to the thread pool: the scheduler neither orders it by priority nor counts it, and it competes with the lanes for the CPU.",
        helpLinkUri: HelpBase + "pa0004");
}
