namespace PriorityAsync;

/// <summary>What kind of work reached a lane after its scheduler stopped taking work.</summary>
public enum RejectedWorkKind
{
    /// <summary>An <c>await</c> continuation (or a <see cref="LaneAwaitable"/>'s).</summary>
    Continuation,

    /// <summary>A callback passed to the lane's <see cref="SynchronizationContext.Post"/> or <see cref="SynchronizationContext.Send"/>.</summary>
    Post,

    /// <summary>A task queued to the lane's <see cref="TaskScheduler"/> (a <c>ContinueWith</c> or <c>StartNew</c> on it).</summary>
    Task,

    /// <summary>A firing of a timer created on the scheduler's <see cref="PriorityScheduler.TimeProvider"/>.</summary>
    TimerCallback,
}
