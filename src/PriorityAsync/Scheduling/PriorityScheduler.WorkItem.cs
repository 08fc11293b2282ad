namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    /// <summary>
    /// One queued item: a <see cref="Task"/>, an <see cref="Action"/> (a continuation), a
    /// <see cref="SendOrPostCallback"/> or a <see cref="TimerCallback"/> with its state. A struct, so queuing allocates nothing.
    /// </summary>
    private protected readonly struct WorkItem(object callback, object? state, long enqueuedAt)
    {
        /// <summary>The value of <see cref="EnqueuedAt"/> when no timestamp was taken.</summary>
        public const long NoTimestamp = long.MinValue;

        public object Callback { get; } = callback;

        public object? State { get; } = state;

        /// <summary>The clock's timestamp at enqueue, or <see cref="NoTimestamp"/> when nothing needed it.</summary>
        public long EnqueuedAt { get; } = enqueuedAt;
    }
}
