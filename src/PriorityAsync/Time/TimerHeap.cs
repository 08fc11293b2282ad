using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync;

/// <summary>
/// The armed timers of a time provider, earliest due first. Re-arming or disposing a timer does not search the heap:
/// its old entry stays, recognised as stale by its sequence number, and is skipped when it reaches the top. Stale
/// entries still hold their timers (and whatever their callbacks capture), so once they outnumber the live ones the
/// heap is rebuilt without them: a stream of timers canceled long before they are due — a lease keeper's wait per
/// message — costs memory in proportion to the timers alive, not to the timers created. Not thread-safe: the owner
/// calls it under its lock.
/// </summary>
/// <typeparam name="TTimer">The owner's timer type.</typeparam>
internal sealed class TimerHeap<TTimer>
    where TTimer : class, IHeapTimer
{
    /// <summary>Below this many stale entries the heap is never rebuilt.</summary>
    private const int MinimumStaleToCompact = 64;

    private PriorityQueue<TTimer, (long Due, long Sequence)> _heap = new();
    private long _sequence;
    private int _stale;

    /// <summary>Gets the number of entries, stale ones included.</summary>
    public int EntryCount => _heap.Count;

    /// <summary>Adds an arming of <paramref name="timer"/> at <paramref name="due"/>.</summary>
    /// <returns>The arming's sequence number (never 0), which the timer keeps to recognise its live entry.</returns>
    public long Arm(TTimer timer, long due)
    {
        var sequence = ++_sequence;
        _heap.Enqueue(timer, (due, sequence));
        return sequence;
    }

    /// <summary>Records that an armed entry became stale (its timer was re-armed, disarmed or disposed).</summary>
    public void OnDisarmed()
    {
        if (++_stale >= MinimumStaleToCompact && _stale > _heap.Count / 2)
        {
            Compact();
        }
    }

    /// <summary>Whether <paramref name="timer"/>'s live entry is the earliest.</summary>
    public bool IsFirst(TTimer timer) => _heap.TryPeek(out var first, out _) && ReferenceEquals(first, timer);

    /// <summary>Gets the earliest live entry, dropping stale entries above it.</summary>
    public bool TryPeekArmed([MaybeNullWhen(false)] out TTimer timer, out long due)
    {
        while (_heap.TryPeek(out timer, out var priority))
        {
            if (timer.IsArmedFor(priority.Sequence))
            {
                due = priority.Due;
                return true;
            }

            _heap.Dequeue();
            _stale = Math.Max(0, _stale - 1);
        }

        due = 0;
        return false;
    }

    /// <summary>Removes the earliest entry (after <see cref="TryPeekArmed"/> returned it).</summary>
    public void RemoveFirst() => _heap.Dequeue();

    /// <summary>Counts the live entries.</summary>
    public int CountArmed()
    {
        var count = 0;
        foreach (var (timer, priority) in _heap.UnorderedItems)
        {
            if (timer.IsArmedFor(priority.Sequence))
            {
                count++;
            }
        }

        return count;
    }

    /// <summary>Removes every entry and returns the live ones, earliest first.</summary>
    public List<(TTimer Timer, long Due)> TakeAllArmed()
    {
        var armed = new List<(TTimer, long)>();
        while (_heap.TryDequeue(out var timer, out var priority))
        {
            if (timer.IsArmedFor(priority.Sequence))
            {
                armed.Add((timer, priority.Due));
            }
        }

        _stale = 0;
        return armed;
    }

    private void Compact()
    {
        var live = new List<(TTimer, (long, long))>(_heap.Count - _stale);
        foreach (var (timer, priority) in _heap.UnorderedItems)
        {
            if (timer.IsArmedFor(priority.Sequence))
            {
                live.Add((timer, priority));
            }
        }

        _heap = new PriorityQueue<TTimer, (long Due, long Sequence)>(live);
        _stale = 0;
    }
}
