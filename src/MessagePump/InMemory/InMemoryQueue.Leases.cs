namespace PriorityAsync.Messaging;

public sealed partial class InMemoryQueue
{
    internal Task<DateTimeOffset> RenewAsync(InMemoryMessage message, CancellationToken cancellationToken) =>
        AfterLatency(static m => m.Queue.Renew(m), message, cancellationToken);

    internal Task CompleteAsync(Guid lockToken, CancellationToken cancellationToken) =>
        AfterLatency(static a => a.Queue.Complete(a.LockToken), (Queue: this, LockToken: lockToken), cancellationToken);

    internal Task AbandonAsync(Guid lockToken, CancellationToken cancellationToken) =>
        AfterLatency(static a => a.Queue.Abandon(a.LockToken), (Queue: this, LockToken: lockToken), cancellationToken);

    internal Task DeadLetterAsync(Guid lockToken, string reason, CancellationToken cancellationToken) =>
        AfterLatency(static a => a.Queue.DeadLetter(a.LockToken, a.Reason), (Queue: this, LockToken: lockToken, Reason: reason), cancellationToken);

    private DateTimeOffset Renew(InMemoryMessage message)
    {
        lock (_gate)
        {
            ThrowIfInjectedFault(_options.RenewFailureRate, "renew");
            var entry = TakeValidLockLocked(message.LockToken, "renew");
            entry.LockedUntil = TimeProvider.GetUtcNow() + _options.LockDuration;
            message.SetLockedUntil(entry.LockedUntil);
            _renewals++;
            return entry.LockedUntil;
        }
    }

    private bool Complete(Guid lockToken)
    {
        lock (_gate)
        {
            ThrowIfInjectedFault(_options.CompleteFailureRate, "complete");
            var entry = TakeValidLockLocked(lockToken, "complete");
            _locked.Remove(lockToken);
            entry.LockToken = Guid.Empty;
            _completed++;
            return true;
        }
    }

    private bool Abandon(Guid lockToken)
    {
        lock (_gate)
        {
            var entry = TakeValidLockLocked(lockToken, "abandon");
            _abandoned++;
            ReleaseLocked(entry);
            return true;
        }
    }

    private bool DeadLetter(Guid lockToken, string reason)
    {
        lock (_gate)
        {
            var entry = TakeValidLockLocked(lockToken, "dead-letter");
            _locked.Remove(lockToken);
            entry.LockToken = Guid.Empty;
            _deadLetters.Add(new DeadLetteredMessage(entry.MessageId, reason, entry.DeliveryCount));
            return true;
        }
    }

    /// <summary>Returns the entry locked by <paramref name="lockToken"/>, or throws <see cref="LeaseLostException"/>.</summary>
    private Entry TakeValidLockLocked(Guid lockToken, string operation)
    {
        ExpireLocksLocked(TimeProvider.GetUtcNow());
        if (_locked.TryGetValue(lockToken, out var entry))
        {
            return entry;
        }

        _leaseLostErrors++;
        throw new LeaseLostException($"Cannot {operation} on {this}: the lock {lockToken} expired or the message was already settled.");
    }

    private void ThrowIfInjectedFault(double rate, string operation)
    {
        if (rate > 0 && _faults.NextDouble() < rate)
        {
            _transientFaults++;
            throw new TransientTransportException($"Injected transient failure of {operation} on {this}.");
        }
    }
}
