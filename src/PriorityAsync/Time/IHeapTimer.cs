namespace PriorityAsync;

/// <summary>A timer kept in a <see cref="TimerHeap{TTimer}"/>.</summary>
internal interface IHeapTimer
{
    /// <summary>Whether the heap entry with <paramref name="sequence"/> is this timer's live arming.</summary>
    bool IsArmedFor(long sequence);
}
