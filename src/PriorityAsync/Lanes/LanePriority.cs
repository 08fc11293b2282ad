namespace PriorityAsync;

/// <summary>
/// Identifies a lane of a <see cref="PriorityScheduler"/> by its rank: 0 is the most urgent lane, and each
/// following rank is less urgent than the one before.
/// </summary>
/// <remarks>
/// The three named values match the default lane set (<see cref="PrioritySchedulerOptions.DefaultLanes"/>):
/// <see cref="Lease"/>, then <see cref="Processing"/>, then <see cref="Receive"/>. With a user-defined lane set,
/// use <see cref="Lane.Priority"/> of <see cref="PriorityScheduler.GetLane(string)"/> (or of a lane in <see cref="PriorityScheduler.Lanes"/>).
/// Two priorities are equal when they denote the same lane.
/// </remarks>
public readonly struct LanePriority : IEquatable<LanePriority>
{
    private LanePriority(int rank) => Rank = rank;

    /// <summary>Gets the most urgent lane of the default set: renewing leases, keeping promises to the outside.</summary>
    public static LanePriority Lease => new(0);

    /// <summary>Gets the middle lane of the default set: the work itself.</summary>
    public static LanePriority Processing => new(1);

    /// <summary>Gets the least urgent lane of the default set: taking new work, which runs only when nothing else is ready.</summary>
    public static LanePriority Receive => new(2);

    /// <summary>
    /// Gets the rank of the lane: 0 is the most urgent, and a lane is more urgent than another when its rank is lower.
    /// A scheduler with <c>n</c> lanes has the ranks 0 to <c>n</c> - 1 (<see cref="PriorityScheduler.Lanes"/>).
    /// </summary>
    public int Rank { get; }

    /// <summary>Returns the priority of the lane at <paramref name="rank"/>.</summary>
    /// <param name="rank">The lane's rank, 0 being the most urgent.</param>
    /// <returns>The priority.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="rank"/> is negative or not below <see cref="PrioritySchedulerOptions.MaxLaneCount"/>.</exception>
    internal static LanePriority FromRank(int rank)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(rank);
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual(rank, PrioritySchedulerOptions.MaxLaneCount);
        return new LanePriority(rank);
    }

    /// <summary>Returns whether <paramref name="left"/> denotes the same lane as <paramref name="right"/>.</summary>
    public static bool operator ==(LanePriority left, LanePriority right) => left.Rank == right.Rank;

    /// <summary>Returns whether <paramref name="left"/> denotes another lane than <paramref name="right"/>.</summary>
    public static bool operator !=(LanePriority left, LanePriority right) => left.Rank != right.Rank;

    /// <inheritdoc />
    public bool Equals(LanePriority other) => Rank == other.Rank;

    /// <inheritdoc />
    public override bool Equals(object? obj) => obj is LanePriority other && Equals(other);

    /// <inheritdoc />
    public override int GetHashCode() => Rank;

    /// <inheritdoc />
    public override string ToString() => Rank switch
    {
        0 => "Lease (rank 0)",
        1 => "Processing (rank 1)",
        2 => "Receive (rank 2)",
        _ => $"rank {Rank}",
    };
}
