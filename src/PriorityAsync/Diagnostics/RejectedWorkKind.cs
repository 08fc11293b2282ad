namespace PriorityAsync;

/// <summary>What kind of work reached a lane after its scheduler stopped taking work.</summary>
public enum RejectedWorkKind
{
    /// <summary>
    /// A continuation queued by this library's awaitables: <see cref="Lane.SwitchTo"/>,
    /// <see cref="PriorityScheduler.YieldTo(LanePriority)"/>, <see cref="PriorityScheduler.YieldIfNeeded"/>.
    /// </summary>
    Continuation,

    /// <summary>
    /// A callback passed to the lane's <see cref="SynchronizationContext.Post"/> or <see cref="SynchronizationContext.Send"/>:
    /// among them every <c>await</c> continuation of code that ran in the lane, and async void completions.
    /// </summary>
    Post,

    /// <summary>A task queued to the lane's <see cref="TaskScheduler"/> (a <c>ContinueWith</c> or <c>StartNew</c> on it).</summary>
    Task,

    /// <summary>A firing of a timer created on the scheduler's <see cref="PriorityScheduler.TimeProvider"/>.</summary>
    TimerCallback,
}
