using System.Numerics;
using System.Runtime.ExceptionServices;

namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    private readonly Queue<WorkItem>[] _queues;
    private readonly bool _hasStarvationBounds;
    private volatile int _readyMask;

    /// <summary>Gets the lock that guards the queues; derived schedulers wait on it for work.</summary>
    private protected object Gate { get; } = new();

    /// <summary>Gets whether any lane in <paramref name="laneMask"/> has a ready item (one volatile read).</summary>
    internal bool IsReady(int laneMask) => (_readyMask & laneMask) != 0;

    /// <summary>Gets whether every lane is empty. Call under <see cref="Gate"/>.</summary>
    private protected bool IsEmptyLocked => _readyMask == 0;

    /// <summary>
    /// Queues a task, continuation or callback into <paramref name="lane"/>. Never throws: this is how the runtime
    /// delivers continuations, so work that arrives after the scheduler stopped is rejected (see <see cref="RejectedWork"/>).
    /// </summary>
    internal void Enqueue(Lane lane, object callback, object? state)
    {
        if (!TryEnqueue(lane, callback, state))
        {
            Reject(lane, callback, state);
        }
    }

    internal int GetQueueLength(Lane lane)
    {
        lock (Gate)
        {
            return _queues[lane.Priority.Rank].Count;
        }
    }

    internal IEnumerable<Task> GetScheduledTasks(Lane lane)
    {
        lock (Gate)
        {
            return _queues[lane.Priority.Rank].Select(item => item.Callback).OfType<Task>().ToArray();
        }
    }

    /// <summary>Runs <paramref name="callback"/> in <paramref name="lane"/> and blocks the calling (outside) thread until it has run.</summary>
    internal void SendFromOutside(Lane lane, SendOrPostCallback callback, object? state)
    {
        using var done = new ManualResetEventSlim();
        ExceptionDispatchInfo? failure = null;
        Enqueue(
            lane,
            (SendOrPostCallback)(_ =>
            {
                try
                {
                    callback(state);
                }
                catch (Exception ex)
                {
                    failure = ExceptionDispatchInfo.Capture(ex);
                }
                finally
                {
                    done.Set();
                }
            }),
            null);
        done.Wait();
        failure?.Throw();
    }

    /// <summary>
    /// Called under <see cref="Gate"/> after an item was queued into the lane of rank <paramref name="rank"/>, or with
    /// <see cref="AnyLane"/> after an operation completed: wake a worker.
    /// </summary>
    private protected abstract void OnWorkAvailableLocked(int rank);

    /// <summary>The <c>rank</c> passed to <see cref="OnWorkAvailableLocked"/> when no particular lane got work.</summary>
    private protected const int AnyLane = -1;

    /// <summary>The lane mask that allows every lane.</summary>
    private protected const int AllLanes = -1;

    /// <summary>Takes the next item by the dispatch rule. Call under <see cref="Gate"/>.</summary>
    private protected bool TryDequeueLocked(out WorkItem item, out Lane lane) => TryDequeueLocked(AllLanes, out item, out lane);

    /// <summary>Takes the next item of the lanes in <paramref name="allowedLanes"/> by the dispatch rule. Call under <see cref="Gate"/>.</summary>
    private protected bool TryDequeueLocked(int allowedLanes, out WorkItem item, out Lane lane)
    {
        var mask = _readyMask;
        if ((mask & allowedLanes) == 0)
        {
            item = default;
            lane = null!;
            return false;
        }

        var rank = BitOperations.TrailingZeroCount(mask & allowedLanes);
        if (_hasStarvationBounds)
        {
            rank = ApplyStarvationBounds(rank, allowedLanes);
        }

        var queue = _queues[rank];
        item = queue.Dequeue();
        if (queue.Count == 0)
        {
            _readyMask = mask & ~(1 << rank);
        }

        lane = _lanes[rank];
        lane.CountDispatchedLocked();
        return true;
    }

    private bool TryEnqueue(Lane lane, object callback, object? state)
    {
        var timestamp = NeedsEnqueueTimestamp ? _clock.GetTimestamp() : WorkItem.NoTimestamp;
        var rank = lane.Priority.Rank;
        lock (Gate)
        {
            if (!AcceptsQueuedWorkLocked)
            {
                return false;
            }

            _queues[rank].Enqueue(new WorkItem(callback, state, timestamp));
            _readyMask |= 1 << rank;
            OnWorkAvailableLocked(rank);
        }

        return true;
    }

    private bool NeedsEnqueueTimestamp => _hasStarvationBounds || PriorityAsyncMetrics.WaitDuration.Enabled;

    private int ApplyStarvationBounds(int rank, int allowedLanes)
    {
        var now = _clock.GetTimestamp();
        for (var lower = rank + 1; lower < _lanes.Length; lower++)
        {
            if ((allowedLanes & (1 << lower)) != 0
                && _lanes[lower].StarvationBound is { } bound
                && _queues[lower].TryPeek(out var head)
                && head.EnqueuedAt != WorkItem.NoTimestamp
                && _clock.GetElapsedTime(head.EnqueuedAt, now) > bound)
            {
                return lower;
            }
        }

        return rank;
    }
}
