using LeaseSimulation.Baselines;

namespace LeaseSimulation.Consumers;

/// <summary>
/// The seed's own fix: its priority-bumping protocol (<see cref="SeedPriorityProtocol"/>) when a role starts and
/// after every await, with lease 3, processing 2 and receive 1 (larger is more urgent, as in the article).
/// </summary>
public sealed class SeedProtocolOrdering : IContinuationOrdering
{
    private readonly SeedPriorityProtocol _protocol = new();

    /// <summary>Creates the ordering.</summary>
    /// <param name="timers">The clock's own time provider.</param>
    public SeedProtocolOrdering(TimeProvider timers)
    {
        ArgumentNullException.ThrowIfNull(timers);
        Timers = timers;
    }

    /// <inheritdoc />
    public TimeProvider Timers { get; }

    /// <summary>Gets how many times a continuation yielded because it was not its turn.</summary>
    public long YieldCount => _protocol.YieldCount;

    /// <inheritdoc />
    public OrderingAwaitable EnterAsync(ConsumerRole role) => OrderingAwaitable.WaitFor(_protocol.WaitForTurnAsync(ToSeedPriority(role)));

    /// <inheritdoc />
    public OrderingAwaitable ResumeAsync(ConsumerRole role) => OrderingAwaitable.WaitFor(_protocol.WaitForTurnAsync(ToSeedPriority(role)));

    private static int ToSeedPriority(ConsumerRole role) => role switch
    {
        ConsumerRole.Lease => 3,
        ConsumerRole.Processing => 2,
        ConsumerRole.Receive => 1,
        _ => throw new ArgumentOutOfRangeException(nameof(role), role, "Unknown consumer role."),
    };
}
