namespace PriorityAsync;

/// <summary>Describes one lane of a <see cref="PriorityScheduler"/>: its name and its optional starvation bound.</summary>
public sealed class LaneOptions
{
    /// <summary>Creates the description of a lane.</summary>
    /// <param name="name">The lane's name, unique within its scheduler; it tags the lane's metrics.</param>
    /// <param name="starvationBound">
    /// When set, an item of this lane that has waited longer than this runs before fresher items of more urgent
    /// lanes. <see langword="null"/> (the default) keeps the lane strictly below the more urgent ones.
    /// </param>
    /// <exception cref="ArgumentException"><paramref name="name"/> is null, empty or white space.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="starvationBound"/> is negative.</exception>
    public LaneOptions(string name, TimeSpan? starvationBound = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        if (starvationBound < TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(starvationBound), starvationBound, "A lane's starvation bound must be zero or positive, or null for none.");
        }

        Name = name;
        StarvationBound = starvationBound;
    }

    /// <summary>Gets the lane's name.</summary>
    public string Name { get; }

    /// <summary>Gets how long an item of this lane may wait before it overtakes more urgent lanes, or <see langword="null"/> for never.</summary>
    public TimeSpan? StarvationBound { get; }

    /// <inheritdoc />
    public override string ToString() => StarvationBound is { } bound ? $"{Name} (starvation bound {bound})" : Name;
}
