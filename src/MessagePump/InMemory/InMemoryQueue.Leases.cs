namespace PriorityAsync.Messaging;

public sealed partial class InMemoryQueue
{
    internal async Task<DateTimeOffset> RenewAsync(Guid lockToken, CancellationToken cancellationToken)
    {
        await DelayAsync(cancellationToken).ConfigureAwait(false);
        cancellationToken.ThrowIfCancellationRequested();
        lock (_gate)
        {
            ThrowIfInjectedFault(_options.RenewFailureRate, "renew");
            var entry = TakeValidLockLocked(lockToken, "renew");
            entry.LockedUntil = TimeProvider.GetUtcNow() + _options.LockDuration;
            _renewals++;
            return entry.LockedUntil;
        }
    }

    internal async Task CompleteAsync(Guid lockToken, CancellationToken cancellationToken)
    {
        await DelayAsync(cancellationToken).ConfigureAwait(false);
        cancellationToken.ThrowIfCancellationRequested();
        lock (_gate)
        {
            ThrowIfInjectedFault(_options.CompleteFailureRate, "complete");
            var entry = TakeValidLockLocked(lockToken, "complete");
            _locked.Remove(lockToken);
            entry.LockToken = Guid.Empty;
            _completed++;
        }
    }

    internal async Task AbandonAsync(Guid lockToken, CancellationToken cancellationToken)
    {
        await DelayAsync(cancellationToken).ConfigureAwait(false);
        cancellationToken.ThrowIfCancellationRequested();
        lock (_gate)
        {
            var entry = TakeValidLockLocked(lockToken, "abandon");
            _abandoned++;
            ReleaseLocked(entry);
        }
    }

    internal async Task DeadLetterAsync(Guid lockToken, string reason, CancellationToken cancellationToken)
    {
        await DelayAsync(cancellationToken).ConfigureAwait(false);
        cancellationToken.ThrowIfCancellationRequested();
        lock (_gate)
        {
            var entry = TakeValidLockLocked(lockToken, "dead-letter");
            _locked.Remove(lockToken);
            entry.LockToken = Guid.Empty;
            _deadLetters.Add(new DeadLetteredMessage(entry.MessageId, reason, entry.DeliveryCount));
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
