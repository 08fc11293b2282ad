namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>Gets the lane with the given priority.</summary>
    /// <param name="priority">The lane's priority.</param>
    /// <returns>The lane.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The scheduler has no lane of that rank.</exception>
    public Lane this[LanePriority priority] => GetLane(priority);

    /// <summary>Gets the lane with the given priority.</summary>
    /// <param name="priority">The lane's priority.</param>
    /// <returns>The lane.</returns>
    /// <exception cref="ArgumentOutOfRangeException">The scheduler has no lane of that rank.</exception>
    public Lane GetLane(LanePriority priority) => GetLane(priority, nameof(priority));

    /// <summary>Gets the lane with the given priority; an unknown rank throws naming <paramref name="parameterName"/>.</summary>
    internal Lane GetLane(LanePriority priority, string parameterName)
    {
        if ((uint)priority.Rank >= (uint)_lanes.Length)
        {
            throw new ArgumentOutOfRangeException(parameterName, priority, $"The scheduler '{Name}' has {_lanes.Length} lane(s); the rank must be below {_lanes.Length}.");
        }

        return _lanes[priority.Rank];
    }

    /// <summary>Gets the lane with the given name.</summary>
    /// <param name="name">The lane's name.</param>
    /// <returns>The lane.</returns>
    /// <exception cref="ArgumentException">The scheduler has no lane of that name.</exception>
    public Lane GetLane(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        return _lanesByName.TryGetValue(name, out var lane)
            ? lane
            : throw new ArgumentException($"The scheduler '{Name}' has no lane named '{name}'; its lanes are {string.Join(", ", _lanes.Select(l => l.Name))}.", nameof(name));
    }
}
