namespace PriorityAsync.MessagePump;

public sealed partial class InMemoryQueue
{
    /// <inheritdoc />
    public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        AfterLatencyAsync(static q => (ILeasedMessage?)q.Receive(), this, cancellationToken);

    /// <summary>Receives up to <paramref name="maxMessages"/> messages in one call: one latency for the whole batch.</summary>
    /// <param name="maxMessages">The most messages to return; at least 1.</param>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>The locked messages, oldest first; none when the queue has no visible message.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxMessages"/> is zero or negative.</exception>
    public Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
        return AfterLatencyAsync(static a => (IReadOnlyList<ILeasedMessage>)a.Queue.ReceiveMany(a.MaxMessages), (Queue: this, MaxMessages: maxMessages), cancellationToken);
    }

    private InMemoryMessage? Receive()
    {
        lock (_gate)
        {
            var now = TimeProvider.GetUtcNow();
            ExpireLocksLocked(now);
            return ReceiveLocked(now);
        }
    }

    private List<ILeasedMessage> ReceiveMany(int maxMessages)
    {
        lock (_gate)
        {
            var now = TimeProvider.GetUtcNow();
            ExpireLocksLocked(now);
            var batch = new List<ILeasedMessage>(Math.Min(maxMessages, _available.Count));
            while (batch.Count < maxMessages && ReceiveLocked(now) is { } message)
            {
                batch.Add(message);
            }

            return batch;
        }
    }

    /// <summary>Locks the next visible message, or returns <see langword="null"/> when none is visible. Call after expiring locks.</summary>
    private InMemoryMessage? ReceiveLocked(DateTimeOffset now)
    {
        if (!_available.TryDequeue(out var entry))
        {
            return null;
        }

        if (entry.DeliveryCount > 0)
        {
            _redelivered++;
            _awaitingRedelivery--;
        }

        entry.DeliveryCount++;
        entry.LockToken = Guid.NewGuid();
        entry.LockedUntil = now + _options.LockDuration;
        _locked.Add(entry.LockToken, entry);
        if (entry.LockedUntil < _nextExpiry)
        {
            _nextExpiry = entry.LockedUntil;
        }

        _received++;
        return new InMemoryMessage(this, entry, entry.LockToken, entry.DeliveryCount, entry.LockedUntil);
    }
}
