using System.Numerics;
using System.Runtime.ExceptionServices;

namespace PriorityAsync;

public abstract partial class PriorityScheduler
{
    private readonly Queue<WorkItem>[] _queues;
    private readonly bool _hasStarvationBounds;
    private volatile int _readyMask;
    private AcceptanceState _acceptance;
    private long _rejectedTimerCallbacks;
    private int _outstandingOperations;

    /// <summary>Whether the scheduler takes new work.</summary>
    private protected enum AcceptanceState
    {
        /// <summary>Work from any thread is accepted.</summary>
        Open,

        /// <summary>Only the scheduler's own threads may add work (continuations of work in flight).</summary>
        Draining,

        /// <summary>No work is accepted; the scheduler has finished.</summary>
        Closed,

        /// <summary>No work is accepted; the scheduler was disposed.</summary>
        Disposed,
    }

    /// <summary>Gets the lock that guards the queues; derived schedulers wait on it for work.</summary>
    private protected object Gate { get; } = new();

    /// <summary>Gets the number of async operations started in a lane (async void methods) that have not completed.</summary>
    private protected int OutstandingOperations => Volatile.Read(ref _outstandingOperations);

    /// <summary>Gets or sets whether and from where the scheduler accepts work. Change it under <see cref="Gate"/>.</summary>
    private protected AcceptanceState Acceptance
    {
        get => _acceptance;
        set => _acceptance = value;
    }

    /// <summary>Gets whether any lane in <paramref name="laneMask"/> has a ready item (one volatile read).</summary>
    internal bool IsReady(int laneMask) => (_readyMask & laneMask) != 0;

    /// <summary>Queues a task, continuation or callback into <paramref name="lane"/>.</summary>
    internal void Enqueue(Lane lane, object callback, object? state)
    {
        if (!TryEnqueue(lane, callback, state, out var rejection))
        {
            throw rejection!;
        }
    }

    /// <summary>Queues a timer firing; a firing after shutdown is counted in <see cref="RejectedTimerCallbackCount"/>.</summary>
    internal void EnqueueTimerCallback(Lane lane, TimerCallback callback, object? state)
    {
        if (!TryEnqueue(lane, callback, state, out _))
        {
            Interlocked.Increment(ref _rejectedTimerCallbacks);
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

    internal void OperationStarted() => Interlocked.Increment(ref _outstandingOperations);

    internal void OperationCompleted()
    {
        if (Interlocked.Decrement(ref _outstandingOperations) == 0)
        {
            lock (Gate)
            {
                OnWorkAvailableLocked();
            }
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

    /// <summary>Called under <see cref="Gate"/> after an item was queued or an operation completed: wake a worker.</summary>
    private protected abstract void OnWorkAvailableLocked();

    /// <summary>Takes the next item by the dispatch rule. Call under <see cref="Gate"/>.</summary>
    private protected bool TryDequeueLocked(out WorkItem item, out Lane lane)
    {
        var mask = _readyMask;
        if (mask == 0)
        {
            item = default;
            lane = null!;
            return false;
        }

        var rank = BitOperations.TrailingZeroCount(mask);
        if (_hasStarvationBounds)
        {
            rank = ApplyStarvationBounds(rank);
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

    private bool TryEnqueue(Lane lane, object callback, object? state, out Exception? rejection)
    {
        var timestamp = NeedsEnqueueTimestamp ? _clock.GetTimestamp() : WorkItem.NoTimestamp;
        var rank = lane.Priority.Rank;
        lock (Gate)
        {
            // The common case, an open scheduler, without a call: GetRejectionLocked is too large to inline.
            rejection = _acceptance == AcceptanceState.Open ? null : GetRejectionLocked();
            if (rejection is not null)
            {
                return false;
            }

            _queues[rank].Enqueue(new WorkItem(callback, state, timestamp));
            _readyMask |= 1 << rank;
            OnWorkAvailableLocked();
        }

        return true;
    }

    private bool NeedsEnqueueTimestamp => _hasStarvationBounds || PriorityAsyncMetrics.WaitDuration.Enabled;

    private Exception? GetRejectionLocked() => _acceptance switch
    {
        AcceptanceState.Open => null,
        AcceptanceState.Draining when IsWorkerThread => null,
        AcceptanceState.Draining => new InvalidOperationException($"{this} is shutting down and accepts work only from its own threads."),
        AcceptanceState.Disposed => new ObjectDisposedException(ToString(), $"{this} has been disposed and accepts no more work."),
        _ => new InvalidOperationException($"{this} has finished running and accepts no more work."),
    };

    private int ApplyStarvationBounds(int rank)
    {
        var now = _clock.GetTimestamp();
        for (var lower = rank + 1; lower < _lanes.Length; lower++)
        {
            if (_lanes[lower].StarvationBound is { } bound
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
