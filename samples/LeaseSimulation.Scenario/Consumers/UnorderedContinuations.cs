namespace LeaseSimulation.Consumers;

/// <summary>The seed's code as is: no ordering at all, delays on the clock's own timers.</summary>
public sealed class UnorderedContinuations : IContinuationOrdering
{
    /// <summary>Creates the ordering.</summary>
    /// <param name="timers">The clock's own time provider.</param>
    public UnorderedContinuations(TimeProvider timers)
    {
        ArgumentNullException.ThrowIfNull(timers);
        Timers = timers;
    }

    /// <inheritdoc />
    public TimeProvider Timers { get; }

    /// <inheritdoc />
    public OrderingAwaitable EnterAsync(ConsumerRole role) => OrderingAwaitable.Completed;

    /// <inheritdoc />
    public OrderingAwaitable ResumeAsync(ConsumerRole role) => OrderingAwaitable.Completed;
}
