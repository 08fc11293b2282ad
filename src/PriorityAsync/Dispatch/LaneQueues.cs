using System.Collections.Concurrent;
using System.Diagnostics;
using System.Numerics;

namespace PriorityAsync;

/// <summary>
/// The lanes' queues and the ready mask that says which of them may hold items: one lock-free queue per lane, and the
/// dispatch rule that picks the next item (the most urgent ready lane, unless a less urgent lane's head has waited
/// longer than its starvation bound). Safe from any number of enqueuers and dequeuers at once.
/// </summary>
internal sealed class LaneQueues
{
    /// <summary>The lane mask that allows every lane.</summary>
    public const int AllLanes = -1;

    private readonly ConcurrentQueue<LaneWorkItem>[] _queues;
    private readonly Lane[] _lanes;
    private readonly TimeProvider _clock;

    // Bit r is set whenever lane r may hold items: an enqueue sets it after its item landed; only a dequeuer that found
    // the lane empty clears it, and then looks again, so a set bit may be stale but an item is never hidden.
    private int _readyMask;

    public LaneQueues(Lane[] lanes, TimeProvider clock)
    {
        _lanes = lanes;
        _clock = clock;
        _queues = new ConcurrentQueue<LaneWorkItem>[lanes.Length];
        for (var rank = 0; rank < lanes.Length; rank++)
        {
            _queues[rank] = new ConcurrentQueue<LaneWorkItem>();
            HasStarvationBounds |= lanes[rank].StarvationBound is not null;
        }
    }

    /// <summary>Gets whether some lane has a starvation bound (then the dispatch rule reads the clock).</summary>
    public bool HasStarvationBounds { get; }

    /// <summary>Gets whether any lane in <paramref name="laneMask"/> has a ready item (one volatile read).</summary>
    public bool IsReady(int laneMask) => (Volatile.Read(ref _readyMask) & laneMask) != 0;

    /// <summary>Gets whether every lane is empty.</summary>
    public bool IsEmpty => Array.TrueForAll(_queues, static queue => queue.IsEmpty);

    /// <summary>Adds <paramref name="item"/> to the lane of rank <paramref name="rank"/> and marks the lane ready.</summary>
    public void Add(int rank, in LaneWorkItem item)
    {
        _queues[rank].Enqueue(item);
        var bit = 1 << rank;
        if ((Volatile.Read(ref _readyMask) & bit) == 0)
        {
            Interlocked.Or(ref _readyMask, bit);
        }
    }

    /// <summary>Takes the next item of the lanes in <paramref name="allowedLanes"/> by the dispatch rule.</summary>
    public bool TryTake(int allowedLanes, out LaneWorkItem item, out int rank)
    {
        while (true)
        {
            var mask = Volatile.Read(ref _readyMask) & allowedLanes;
            if (mask == 0)
            {
                item = default;
                rank = -1;
                return false;
            }

            Debug.Assert((uint)Volatile.Read(ref _readyMask) >> _queues.Length == 0 || _queues.Length == 32, "The ready mask has a bit only for lanes that exist.");
            rank = BitOperations.TrailingZeroCount(mask);
            if (HasStarvationBounds)
            {
                rank = ApplyStarvationBounds(rank, allowedLanes);
            }

            Debug.Assert(rank < _queues.Length && (allowedLanes & (1 << rank)) != 0, $"The dispatch rule picked lane {rank}, which exists and is allowed.");
            var queue = _queues[rank];
            if (queue.TryDequeue(out item))
            {
                return true;
            }

            // Seen empty: clear the bit, then look again, in case an enqueue landed after the failed dequeue but saw
            // the bit still set and left it.
            var bit = 1 << rank;
            Interlocked.And(ref _readyMask, ~bit);
            if (!queue.IsEmpty)
            {
                Interlocked.Or(ref _readyMask, bit);
            }
        }
    }

    /// <summary>Gets the number of items waiting in the lane of rank <paramref name="rank"/>.</summary>
    public int Count(int rank) => _queues[rank].Count;

    /// <summary>Gets a snapshot of the tasks waiting in the lane of rank <paramref name="rank"/> (for debuggers).</summary>
    public Task[] GetScheduledTasks(int rank) =>
        _queues[rank].ToArray().Select(item => item.Callback).OfType<Task>().ToArray();

    private int ApplyStarvationBounds(int rank, int allowedLanes)
    {
        var now = _clock.GetTimestamp();
        for (var lower = rank + 1; lower < _lanes.Length; lower++)
        {
            if ((allowedLanes & (1 << lower)) != 0
                && _lanes[lower].StarvationBound is { } bound
                && _queues[lower].TryPeek(out var head)
                && head.EnqueuedAt != LaneWorkItem.NoTimestamp
                && _clock.GetElapsedTime(head.EnqueuedAt, now) > bound)
            {
                return lower;
            }
        }

        return rank;
    }
}
