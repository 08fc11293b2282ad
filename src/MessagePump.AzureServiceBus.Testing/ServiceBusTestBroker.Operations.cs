using PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

public sealed partial class ServiceBusTestBroker
{
    internal long NextSequenceNumber() => Interlocked.Increment(ref _sequenceNumber);

    /// <summary>
    /// Runs an operation under the broker's lock after judging every lock on the clock, then hands available messages
    /// to receivers with credit and sends them once the lock is released.
    /// </summary>
    internal T Operate<T>(Func<DateTimeOffset, T> action, Action? afterCollect = null)
    {
        var result = Operate(action, out var signalLostSessions, afterCollect);
        signalLostSessions();
        return result;
    }

    /// <summary>
    /// As <see cref="Operate{T}(Func{DateTimeOffset, T}, Action?)"/>, but the holders of sessions whose locks the operation
    /// ended are detached only when the caller runs <paramref name="signalLostSessions"/>: a management request that lost
    /// a session lock answers first, so the client reads session-lock-lost on the request before its link detaches.
    /// </summary>
    internal T Operate<T>(Func<DateTimeOffset, T> action, out Action signalLostSessions, Action? afterCollect = null)
    {
        var deliveries = new List<PendingDelivery>();
        var acceptedWaiters = new List<SessionWaiter>();
        var lostSessionHolders = new List<IConsumer>();
        T result;
        lock (Sync)
        {
            // Whole milliseconds: AMQP timestamps carry no more, so the client sees exactly the times the broker judges by.
            var exact = TimeProvider.GetUtcNow();
            var now = exact - TimeSpan.FromTicks(exact.Ticks % TimeSpan.TicksPerMillisecond);
            foreach (var queue in _queues.Values)
            {
                queue.SweepLocked(now, lostSessionHolders);
            }

            result = action(now);

            // A session lock the action ended (a lost-lock fault) is freed and signalled now, not at the next sweep.
            foreach (var queue in _queues.Values)
            {
                queue.SweepSessionsLocked(now, lostSessionHolders);
            }

            for (var i = _sessionWaiters.Count - 1; i >= 0; i--)
            {
                var waiter = _sessionWaiters[i];
                if (waiter.TryAcquireLocked(now))
                {
                    _sessionWaiters.RemoveAt(i);
                    acceptedWaiters.Add(waiter);
                }
            }

            foreach (var queue in _queues.Values)
            {
                queue.CollectLocked(now, deliveries);
            }

            afterCollect?.Invoke();
            RescheduleLocked(now);
        }

        foreach (var waiter in acceptedWaiters)
        {
            waiter.Complete();
        }

        signalLostSessions = lostSessionHolders.Count == 0 ? static () => { } : () =>
        {
            foreach (var holder in lostSessionHolders)
            {
                ((ConsumerLink)holder).OnSessionLost();
            }
        };
        Deliver(deliveries);
        return result;
    }

    /// <summary>Ends a held session's lock now and detaches its holder's link; false when nobody holds the session.</summary>
    internal Task<bool> LoseSessionLockAsync(string entityPath, string sessionId)
    {
        var queue = FindQueue(entityPath);
        if (queue is null || queue.IsDeadLetterQueue || !queue.RequiresSession)
        {
            throw new ArgumentException($"The broker has no session entity '{entityPath}'.", nameof(entityPath));
        }

        var holder = Operate(now =>
        {
            var held = queue.HeldSessionLocked(sessionId)?.Holder;
            queue.ForfeitSessionLockLocked(sessionId, now);
            return held;
        });
        return holder is ConsumerLink link
            ? link.Detached.ContinueWith(static _ => true, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default)
            : Task.FromResult(false);
    }

    internal void AddSessionWaiterLocked(SessionWaiter waiter) => _sessionWaiters.Add(waiter);

    internal bool RemoveSessionWaiter(SessionWaiter waiter)
    {
        lock (Sync)
        {
            return _sessionWaiters.Remove(waiter);
        }
    }

    private static void Deliver(List<PendingDelivery> deliveries)
    {
        foreach (var delivery in deliveries)
        {
            ((ConsumerLink)delivery.Consumer).Send(delivery);
        }
    }

    private void RescheduleLocked(DateTimeOffset now)
    {
        DateTimeOffset? next = null;
        foreach (var queue in _queues.Values)
        {
            if (queue.NextExpiryLocked(now) is { } expiry && (next is null || expiry < next))
            {
                next = expiry;
            }
        }

        if (_disposed)
        {
            return;
        }

        var due = next is { } at ? at - now : Timeout.InfiniteTimeSpan;
        if (next is not null && due < TimeSpan.FromMilliseconds(1))
        {
            due = TimeSpan.FromMilliseconds(1);
        }

        try
        {
            _timer.Change(due, Timeout.InfiniteTimeSpan);
        }
        catch (ObjectDisposedException)
        {
            // Disposed between the check and the change: nothing is judged any more.
        }
    }

    private void OnTimer()
    {
        try
        {
            Operate(static _ => 0);
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
            // A timer callback must never take the process down; the next operation judges the locks again.
            System.Diagnostics.Trace.TraceError("ServiceBusTestBroker: lock expiry pass failed: {0}", exception);
        }
    }
}
