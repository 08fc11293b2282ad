using System.Runtime.CompilerServices;

namespace PriorityAsync;

/// <summary>
/// One queued item of a lane: a <see cref="Task"/>, an <see cref="Action"/> (a continuation), a
/// <see cref="SendOrPostCallback"/> or a <see cref="TimerCallback"/> with its state. The item knows what kind it is and
/// how it runs, so the worker that runs it and the thread-pool hand-off of rejected work invoke it the same way. A
/// struct, so queuing allocates nothing.
/// </summary>
internal readonly struct LaneWorkItem(object callback, object? state, long enqueuedAt)
{
    /// <summary>The value of <see cref="EnqueuedAt"/> when no timestamp was taken.</summary>
    public const long NoTimestamp = long.MinValue;

    public object Callback { get; } = callback;

    public object? State { get; } = state;

    /// <summary>The clock's timestamp at enqueue, or <see cref="NoTimestamp"/> when nothing needed it.</summary>
    public long EnqueuedAt { get; } = enqueuedAt;

    /// <summary>
    /// Gets what kind of work the item is. Continuations and posts are tested first: <see cref="Action"/> and
    /// <see cref="SendOrPostCallback"/> are sealed, so each test is one compare.
    /// </summary>
    public RejectedWorkKind Kind => Callback switch
    {
        Action => RejectedWorkKind.Continuation,
        SendOrPostCallback => RejectedWorkKind.Post,
        Task => RejectedWorkKind.Task,
        _ => RejectedWorkKind.TimerCallback,
    };

    /// <summary>Runs the item on the calling thread; a task runs through <paramref name="lane"/>'s task scheduler.</summary>
    public void Invoke(Lane lane)
    {
        // Kind has already checked the type, so the casts below need no second check (a timer callback's cast does:
        // it is the fallback of Kind).
        switch (Kind)
        {
            case RejectedWorkKind.Continuation:
                Unsafe.As<Action>(Callback)();
                break;
            case RejectedWorkKind.Post:
                Unsafe.As<SendOrPostCallback>(Callback)(State);
                break;
            case RejectedWorkKind.Task:
                ((LaneTaskScheduler)lane.TaskScheduler).RunTask(Unsafe.As<Task>(Callback));
                break;
            default:
                ((TimerCallback)Callback)(State);
                break;
        }
    }
}
