namespace PriorityAsync;

/// <summary>Describes work that reached a lane after its scheduler stopped taking work; it runs on the thread pool.</summary>
public sealed class RejectedWorkEventArgs : EventArgs
{
    /// <summary>Creates the event data.</summary>
    /// <param name="lane">The lane the work was meant for.</param>
    /// <param name="kind">What kind of work it is.</param>
    internal RejectedWorkEventArgs(Lane lane, RejectedWorkKind kind)
    {
        Lane = lane;
        Kind = kind;
    }

    /// <summary>Gets the lane the work was meant for.</summary>
    public Lane Lane { get; }

    /// <summary>Gets what kind of work it is.</summary>
    public RejectedWorkKind Kind { get; }
}
