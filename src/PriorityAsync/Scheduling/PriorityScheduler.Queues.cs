using System.Collections.Concurrent;
using System.Numerics;
using System.Runtime.ExceptionServices;

namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    private readonly ConcurrentQueue<WorkItem>[] _queues;
    private readonly bool _hasStarvationBounds;

    // Bit r is set whenever lane r may hold items: an enqueue sets it after its item landed; only a dequeuer that found
    // the lane empty clears it, and then looks again, so a set bit may be stale but an item is never hidden.
    private int _readyMask;

    /// <summary>Gets the lock that guards the scheduler's state; derived schedulers park their threads on it.</summary>
    private protected object Gate { get; } = new();

    /// <summary>Gets whether any lane in <paramref name="laneMask"/> has a ready item (one volatile read).</summary>
    internal bool IsReady(int laneMask) => (Volatile.Read(ref _readyMask) & laneMask) != 0;

    /// <summary>
    /// Queues a task, continuation or callback into <paramref name="lane"/>. Never throws: this is how the runtime
    /// delivers continuations, so work that arrives after the scheduler stopped is rejected (see <see cref="RejectedWork"/>).
    /// Takes no lock: the item goes into the lane's lock-free queue, then the derived scheduler wakes a worker if none
    /// is awake to find it.
    /// </summary>
    internal void Enqueue(Lane lane, object callback, object? state)
    {
        if (!AcceptsQueuedWork && !AcceptsOwnWorkWhileClosing)
        {
            Reject(lane, callback, state);
            return;
        }

        var timestamp = NeedsEnqueueTimestamp ? _clock.GetTimestamp() : WorkItem.NoTimestamp;
        var rank = lane.Priority.Rank;
        _queues[rank].Enqueue(new WorkItem(callback, state, timestamp));
        var bit = 1 << rank;
        if ((Volatile.Read(ref _readyMask) & bit) == 0)
        {
            Interlocked.Or(ref _readyMask, bit);
        }

        if (HasFinished)
        {
            // The scheduler finished while the item landed: no worker is left to run it. The finisher and this thread
            // both rescue what they find (each item is taken once), so it is rejected rather than stranded.
            RejectStragglers();
            return;
        }

        OnWorkAvailable(rank);
    }

    /// <summary>
    /// Rejects (see <see cref="RejectedWork"/>) every item still queued once the scheduler has finished: an enqueue
    /// that raced with the finish. Called by the finisher after it marked the scheduler finished, and by such an enqueue.
    /// </summary>
    private protected void RejectStragglers()
    {
        while (TryDequeue(null, AllLanes, out var item, out var lane))
        {
            Reject(lane, item.Callback, item.State);
        }
    }

    internal int GetQueueLength(Lane lane) => _queues[lane.Priority.Rank].Count;

    internal IEnumerable<Task> GetScheduledTasks(Lane lane) =>
        _queues[lane.Priority.Rank].ToArray().Select(item => item.Callback).OfType<Task>().ToArray();

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
    /// Called, without the lock, after an item was queued into the lane of rank <paramref name="rank"/>, or with
    /// <see cref="AnyLane"/> after the scheduler's state changed (an operation completed): wake a worker if needed.
    /// </summary>
    private protected abstract void OnWorkAvailable(int rank);

    /// <summary>The <c>rank</c> passed to <see cref="OnWorkAvailable"/> when no particular lane got work.</summary>
    private protected const int AnyLane = -1;

    /// <summary>The lane mask that allows every lane.</summary>
    private protected const int AllLanes = -1;

    /// <summary>Takes the next item of any lane by the dispatch rule for <paramref name="worker"/>. Lock-free; safe from several workers at once.</summary>
    private protected bool TryDequeue(Worker worker, out WorkItem item, out Lane lane) => TryDequeue(worker, AllLanes, out item, out lane);

    /// <summary>
    /// Takes the next item of the lanes in <paramref name="allowedLanes"/> by the dispatch rule. Lock-free. The
    /// dispatch is counted for <paramref name="worker"/> (not at all without one: a rejected straggler).
    /// </summary>
    private protected bool TryDequeue(Worker? worker, int allowedLanes, out WorkItem item, out Lane lane)
    {
        while (true)
        {
            var mask = Volatile.Read(ref _readyMask) & allowedLanes;
            if (mask == 0)
            {
                item = default;
                lane = null!;
                return false;
            }

            var rank = BitOperations.TrailingZeroCount(mask);
            if (_hasStarvationBounds)
            {
                rank = ApplyStarvationBounds(rank, allowedLanes);
            }

            var queue = _queues[rank];
            if (queue.TryDequeue(out item))
            {
                lane = _lanes[rank];
                worker?.CountDispatched(rank);
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

    /// <summary>Gets whether every lane is empty.</summary>
    private protected bool AreLanesEmpty()
    {
        foreach (var queue in _queues)
        {
            if (!queue.IsEmpty)
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>Gets the items taken from the lane of rank <paramref name="rank"/> to run, summed over the workers.</summary>
    internal long GetDispatchedCount(int rank)
    {
        lock (_allWorkers)
        {
            var total = 0L;
            foreach (var worker in _allWorkers)
            {
                total += worker.GetDispatched(rank);
            }

            return total;
        }
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
