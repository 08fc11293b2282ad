namespace PriorityAsync.MessagePump;

public sealed partial class InMemoryQueue
{
    internal Task<DateTimeOffset> RenewAsync(InMemoryMessage message, CancellationToken cancellationToken) =>
        AfterLatencyAsync(static m => m.Queue.Renew(m), message, cancellationToken);

    internal Task CompleteAsync(Guid lockToken, CancellationToken cancellationToken) =>
        AfterLatencyAsync(static a => a.Queue.Complete(a.LockToken), (Queue: this, LockToken: lockToken), cancellationToken);

    /// <summary>
    /// Completes every message of <paramref name="messages"/> in one call: one latency for the whole batch, and an
    /// injected transient fault fails the whole call (nothing completed).
    /// </summary>
    /// <param name="messages">Messages received from this queue; at least one.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>One entry per message, in order: <see langword="null"/> when completed, else its <see cref="LeaseLostException"/>.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="messages"/> or one of its items is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="messages"/> is empty or holds a message of another queue.</exception>
    public Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        MessageBatch.ThrowIfInvalid(messages);
        var tokens = new Guid[messages.Count];
        for (var i = 0; i < tokens.Length; i++)
        {
            tokens[i] = messages[i] is InMemoryMessage own && own.Queue == this
                ? own.LockToken
                : throw new ArgumentException($"The message at index {i} ({messages[i]}) was not received from {this}.", nameof(messages));
        }

        return AfterLatencyAsync(static a => (IReadOnlyList<Exception?>)a.Queue.CompleteMany(a.Tokens), (Queue: this, Tokens: tokens), cancellationToken);
    }

    /// <summary>
    /// Renews the lease of every message of <paramref name="messages"/> in one call: one latency for the whole batch, and
    /// an injected transient fault (<see cref="InMemoryQueueOptions.RenewFailureRate"/>) fails the whole call (nothing renewed).
    /// </summary>
    /// <param name="messages">Messages received from this queue; at least one.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>
    /// One entry per message, in order: renewed until now plus the lock duration (as each message's
    /// <see cref="ILeasedMessage.LockedUntil"/> now reports), or a <see cref="LeaseLostException"/> when its lock had
    /// expired or it was settled.
    /// </returns>
    /// <exception cref="ArgumentNullException"><paramref name="messages"/> or one of its items is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="messages"/> is empty or holds a message of another queue.</exception>
    public Task<IReadOnlyList<LeaseRenewal>> RenewBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default)
    {
        MessageBatch.ThrowIfInvalid(messages, "renew");
        var own = new InMemoryMessage[messages.Count];
        for (var i = 0; i < own.Length; i++)
        {
            own[i] = messages[i] is InMemoryMessage message && message.Queue == this
                ? message
                : throw new ArgumentException($"The message at index {i} ({messages[i]}) was not received from {this}.", nameof(messages));
        }

        return AfterLatencyAsync(static a => (IReadOnlyList<LeaseRenewal>)a.Queue.RenewMany(a.Messages), (Queue: this, Messages: own), cancellationToken);
    }

    internal Task AbandonAsync(Guid lockToken, CancellationToken cancellationToken) =>
        AfterLatencyAsync(static a => a.Queue.Abandon(a.LockToken), (Queue: this, LockToken: lockToken), cancellationToken);

    internal Task DeadLetterAsync(Guid lockToken, string reason, CancellationToken cancellationToken) =>
        AfterLatencyAsync(static a => a.Queue.DeadLetter(a.LockToken, a.Reason), (Queue: this, LockToken: lockToken, Reason: reason), cancellationToken);

    private DateTimeOffset Renew(InMemoryMessage message)
    {
        lock (_gate)
        {
            _renewCalls++;
            ThrowIfInjectedFault(_options.RenewFailureRate, "renew");
            var entry = TakeValidLockLocked(message.LockToken, "renew");
            entry.LockedUntil = TimeProvider.GetUtcNow() + _options.LockDuration;
            message.SetLockedUntil(entry.LockedUntil);
            _renewals++;
            return entry.LockedUntil;
        }
    }

    private LeaseRenewal[] RenewMany(InMemoryMessage[] messages)
    {
        lock (_gate)
        {
            _renewCalls++;
            ThrowIfInjectedFault(_options.RenewFailureRate, "renew");
            var now = TimeProvider.GetUtcNow();
            ExpireLocksLocked(now);
            var outcomes = new LeaseRenewal[messages.Length];
            for (var i = 0; i < messages.Length; i++)
            {
                if (_locked.TryGetValue(messages[i].LockToken, out var entry))
                {
                    entry.LockedUntil = now + _options.LockDuration;
                    messages[i].SetLockedUntil(entry.LockedUntil);
                    _renewals++;
                    outcomes[i] = LeaseRenewal.Renewed(entry.LockedUntil);
                }
                else
                {
                    _leaseLostErrors++;
                    outcomes[i] = LeaseRenewal.Failed(LockLost(messages[i].LockToken, "renew"));
                }
            }

            return outcomes;
        }
    }

    private bool Complete(Guid lockToken)
    {
        lock (_gate)
        {
            ThrowIfInjectedFault(_options.CompleteFailureRate, "complete");
            CompleteLocked(TakeValidLockLocked(lockToken, "complete"));
            return true;
        }
    }

    private Exception?[] CompleteMany(Guid[] lockTokens)
    {
        lock (_gate)
        {
            ThrowIfInjectedFault(_options.CompleteFailureRate, "complete");
            ExpireLocksLocked(TimeProvider.GetUtcNow());
            var outcomes = new Exception?[lockTokens.Length];
            for (var i = 0; i < lockTokens.Length; i++)
            {
                if (_locked.TryGetValue(lockTokens[i], out var entry))
                {
                    CompleteLocked(entry);
                }
                else
                {
                    _leaseLostErrors++;
                    outcomes[i] = LockLost(lockTokens[i], "complete");
                }
            }

            return outcomes;
        }
    }

    private void CompleteLocked(Entry entry)
    {
        _locked.Remove(entry.LockToken);
        entry.LockToken = Guid.Empty;
        _completed++;
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
            _deadLetters.Add(new InMemoryDeadLetter(entry.MessageId, reason, entry.DeliveryCount));
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
        throw LockLost(lockToken, operation);
    }

    private LeaseLostException LockLost(Guid lockToken, string operation) =>
        new($"Cannot {operation} on {this}: the lock {lockToken} expired or the message was already settled.");

    private void ThrowIfInjectedFault(double rate, string operation)
    {
        if (rate > 0 && _faults.NextDouble() < rate)
        {
            _transientFaults++;
            throw new TransientTransportException($"Injected transient failure of {operation} on {this}.");
        }
    }
}
