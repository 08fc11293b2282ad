using PriorityAsync;

namespace LeaseSimulation.Consumers;

/// <summary>
/// The minimal PriorityAsync change: each role starts with <c>await PriorityScheduler.YieldTo(lane)</c> (lease,
/// processing, receive) and its later awaits stay in that lane; delays use the scheduler's
/// <see cref="PriorityScheduler.TimeProvider"/>, whose timers fire in the lane they were created in, off the
/// .NET thread pool.
/// </summary>
public sealed class LaneOrdering : IContinuationOrdering
{
    private readonly PriorityScheduler _scheduler;

    /// <summary>Creates the ordering for <paramref name="scheduler"/>.</summary>
    /// <param name="scheduler">The scheduler the consumer runs in.</param>
    public LaneOrdering(PriorityScheduler scheduler)
    {
        ArgumentNullException.ThrowIfNull(scheduler);
        _scheduler = scheduler;
        Timers = scheduler.TimeProvider;
    }

    /// <inheritdoc />
    public TimeProvider Timers { get; }

    /// <summary>Gets the lane of a role.</summary>
    /// <param name="role">The role.</param>
    /// <returns>Lease, Processing or Receive.</returns>
    public static LanePriority LaneOf(ConsumerRole role) => role switch
    {
        ConsumerRole.Lease => LanePriority.Lease,
        ConsumerRole.Processing => LanePriority.Processing,
        ConsumerRole.Receive => LanePriority.Receive,
        _ => throw new ArgumentOutOfRangeException(nameof(role), role, "Unknown consumer role."),
    };

    /// <inheritdoc />
    public OrderingAwaitable EnterAsync(ConsumerRole role) => OrderingAwaitable.SwitchTo(_scheduler.GetLane(LaneOf(role)));

    /// <inheritdoc />
    public OrderingAwaitable ResumeAsync(ConsumerRole role) => OrderingAwaitable.Completed;
}
