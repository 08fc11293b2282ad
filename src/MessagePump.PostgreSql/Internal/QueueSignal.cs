namespace PriorityAsync.MessagePump.PostgreSql.Internal;

/// <summary>A wake-up signal for the idle receivers of one queue: <see cref="Next"/> completes at the next <see cref="Set"/>.</summary>
internal sealed class QueueSignal
{
    private TaskCompletionSource _next = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Gets a task that completes at the next <see cref="Set"/>; take it before looking at the queue, so no wake-up is missed.</summary>
    public Task Next => Volatile.Read(ref _next).Task;

    public void Set() => Interlocked.Exchange(ref _next, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).TrySetResult();
}
