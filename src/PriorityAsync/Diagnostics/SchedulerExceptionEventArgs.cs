namespace PriorityAsync;

/// <summary>Describes an exception thrown by work posted to a lane (work that had no task to carry it).</summary>
public sealed class SchedulerExceptionEventArgs : EventArgs
{
    /// <summary>Creates the event data.</summary>
    /// <param name="lane">The lane the work ran in.</param>
    /// <param name="exception">The exception.</param>
    internal SchedulerExceptionEventArgs(Lane lane, Exception exception)
    {
        Lane = lane;
        Exception = exception;
    }

    /// <summary>Gets the lane the work ran in.</summary>
    public Lane Lane { get; }

    /// <summary>Gets the exception.</summary>
    public Exception Exception { get; }
}
