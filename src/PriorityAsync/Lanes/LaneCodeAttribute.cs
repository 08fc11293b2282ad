namespace PriorityAsync;

/// <summary>
/// Marks a method, a lambda, a local function or every method of a class as lane code: code that runs in a lane of a
/// <see cref="PriorityScheduler"/>, which the analyzers shipped with this package check against the one rule (yield
/// between chunks of CPU work, do not block, stay in the lane; docs/analyzers.md). Handlers given to the message pump,
/// <see cref="Lane.Run(Func{Task})"/> and the entries of <see cref="PriorityAsyncContext"/> are lane code without it;
/// mark a method that such code calls, or a method given to them as a method group.
/// </summary>
/// <remarks>The attribute has no effect at run time.</remarks>
[AttributeUsage(AttributeTargets.Method | AttributeTargets.Class | AttributeTargets.Struct, Inherited = false)]
public sealed class LaneCodeAttribute : Attribute
{
}
