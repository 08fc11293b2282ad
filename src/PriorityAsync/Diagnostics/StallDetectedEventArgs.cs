namespace PriorityAsync;

/// <summary>Describes one slice that held its thread for at least <see cref="PrioritySchedulerOptions.StallThreshold"/>.</summary>
public sealed class StallDetectedEventArgs : EventArgs
{
    /// <summary>Creates the event data.</summary>
    /// <param name="lane">The lane whose item ran too long.</param>
    /// <param name="duration">How long the slice held its thread.</param>
    internal StallDetectedEventArgs(Lane lane, TimeSpan duration)
    {
        Lane = lane;
        Duration = duration;
    }

    /// <summary>Gets the lane whose item ran too long.</summary>
    public Lane Lane { get; }

    /// <summary>Gets how long the slice held its thread.</summary>
    public TimeSpan Duration { get; }
}
