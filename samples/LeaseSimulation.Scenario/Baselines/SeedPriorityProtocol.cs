namespace LeaseSimulation.Baselines;

/// <summary>
/// The seed article's fix, implemented faithfully as a baseline: a shared "desired priority"; before running, a
/// continuation whose priority is not the desired one raises the desired priority (if its own is higher) and yields
/// again, until it finds the desired priority equal to its own, resets it and runs.
/// </summary>
/// <remarks>
/// Every waiting continuation keeps re-posting itself, so the cost of one turn grows with the number of waiting
/// continuations. Larger numbers are more urgent here, as in the article (lease 3, processing 2, receive 1). It works
/// on any context that re-queues <see cref="Task.Yield"/> at the back: a single-thread loop or the thread pool.
/// </remarks>
public sealed class SeedPriorityProtocol
{
    /// <summary>The value of the desired priority when no continuation has claimed it.</summary>
    public const int NoPriority = int.MinValue;

    private int _desiredPriority = NoPriority;
    private long _yields;

    /// <summary>Gets how many times a continuation yielded because it was not its turn.</summary>
    public long YieldCount => Interlocked.Read(ref _yields);

    /// <summary>Waits, by yielding, until it is the turn of a continuation of <paramref name="priority"/>.</summary>
    /// <param name="priority">The continuation's priority; larger is more urgent.</param>
    /// <returns>A task that completes when the continuation may run.</returns>
    public async Task WaitForTurnAsync(int priority)
    {
        while (true)
        {
            var desired = Volatile.Read(ref _desiredPriority);
            if (desired == priority && Interlocked.CompareExchange(ref _desiredPriority, NoPriority, desired) == desired)
            {
                return;
            }

            if (desired < priority)
            {
                Interlocked.CompareExchange(ref _desiredPriority, priority, desired);
            }

            Interlocked.Increment(ref _yields);
            await Task.Yield();
        }
    }
}
