namespace LeaseSimulation.Consumers;

/// <summary>
/// What a strategy adds to the seed's consumer code: which timers its delays use, and what runs when a role starts
/// and after each of its awaits. The FIFO strategy adds nothing.
/// </summary>
public interface IContinuationOrdering
{
    /// <summary>Gets the time provider whose timers complete the consumer's delays.</summary>
    TimeProvider Timers { get; }

    /// <summary>Runs at the start of the receive loop, of a lease keeper and of a processor.</summary>
    /// <param name="role">The role that starts.</param>
    /// <returns>An awaitable that completes when the role may go on.</returns>
    OrderingAwaitable EnterAsync(ConsumerRole role);

    /// <summary>Runs after every await of a role, before its next step.</summary>
    /// <param name="role">The role that resumes.</param>
    /// <returns>An awaitable that completes when the role may go on.</returns>
    OrderingAwaitable ResumeAsync(ConsumerRole role);
}
