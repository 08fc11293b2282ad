namespace LeaseSimulation.Settings;

/// <summary>What the contexts have in common.</summary>
public static class ContextKindExtensions
{
    /// <summary>Gets whether every continuation of the consumer runs on one thread (<see cref="ContextKind.SingleThread"/>, <see cref="ContextKind.Hosted"/>).</summary>
    /// <param name="context">The context.</param>
    /// <returns>Whether it is a one-thread context.</returns>
    public static bool IsOneThread(this ContextKind context) => context is ContextKind.SingleThread or ContextKind.Hosted;
}
