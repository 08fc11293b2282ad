namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

public sealed partial class ServiceBusTestQueue
{
    internal SettleResult SettleLocked(IConsumer? consumer, Guid lockToken, SettleKind kind, string? reason, string? description, DateTimeOffset now, IReadOnlyList<KeyValuePair<string, object>>? propertiesToModify = null)
    {
        // As Service Bus: a lock belongs to the receive link that took it; once that link is detached, no settlement
        // (over the link, another link or the $management node) finds it, and the message comes back when it expires.
        if (!_locked.TryGetValue(lockToken, out var message) || (consumer is not null && !ReferenceEquals(message.Holder, consumer)) || message.Holder is { IsClosed: true })
        {
            return message?.SessionId is not null || consumer?.SessionId is not null ? SettleResult.SessionLockLost : SettleResult.LockLost;
        }

        if (propertiesToModify is { Count: > 0 } && kind is not SettleKind.Complete and not SettleKind.Release)
        {
            message.Encoded = AmqpCodec.WithApplicationProperties(message.Encoded, propertiesToModify);
        }

        switch (kind)
        {
            case SettleKind.Complete:
                _locked.Remove(lockToken);
                message.Holder = null;
                CountCompletionLocked(message);
                return SettleResult.Done;
            case SettleKind.Abandon:
                _abandonedCount++;
                ReturnLocked(message, now);
                return SettleResult.Done;
            case SettleKind.Release:
                message.DeliveryCount--;
                ReturnLocked(message, now);
                return SettleResult.Done;
            case SettleKind.DeadLetter:
                _locked.Remove(lockToken);
                message.Holder = null;
                DeadLetterLocked(message, reason, description, now);
                return SettleResult.Done;
            case SettleKind.Defer:
                _locked.Remove(lockToken);
                message.Holder = null;
                message.Deferred = true;
                _deferred.Add(message.SequenceNumber, message);
                return SettleResult.Done;
            default:
                return SettleResult.NotSupported;
        }
    }

    /// <summary>Renews a message lock; null when the lock is unknown or already expired.</summary>
    internal DateTimeOffset? RenewLocked(Guid lockToken, DateTimeOffset now)
    {
        if (!_locked.TryGetValue(lockToken, out var message) || message.LockedUntil <= now || message.Holder is { IsClosed: true })
        {
            return null;
        }

        if (IsSessionBound(message))
        {
            return message.LockedUntil;
        }

        message.LockedUntil = now + LockDuration;
        return message.LockedUntil;
    }

    /// <summary>Renews a session lock; null when the session is not held, its lock expired, or (given a link name) another link holds it.</summary>
    internal DateTimeOffset? RenewSessionLocked(string sessionId, string? associatedLinkName, DateTimeOffset now)
    {
        if (!_sessions.TryGetValue(sessionId, out var session) || session.Holder is null || session.LockedUntil <= now
            || (associatedLinkName is not null && !string.Equals(session.Holder.LinkName, associatedLinkName, StringComparison.Ordinal)))
        {
            return null;
        }

        session.LockedUntil = now + LockDuration;
        foreach (var message in _locked.Values)
        {
            if (string.Equals(message.SessionId, sessionId, StringComparison.Ordinal))
            {
                message.LockedUntil = session.LockedUntil;
            }
        }

        return session.LockedUntil;
    }

    internal void CountRenewLocked() => _renewCount++;

    internal void CountRefusedRenewLocked() => _refusedRenewCount++;

    /// <summary>
    /// Ends message locks now, as the service has when it answers a renewal 410: later renewals and settlements of them
    /// are answered lock-lost too, and the messages come back at the next sweep.
    /// </summary>
    internal void ForfeitLocksLocked(IEnumerable<Guid> lockTokens, DateTimeOffset now)
    {
        foreach (var token in lockTokens)
        {
            if (_locked.TryGetValue(token, out var message) && !IsSessionBound(message) && message.LockedUntil > now)
            {
                message.LockedUntil = now;
            }
        }
    }

    /// <summary>Ends a session's lock now (a lost-lock fault): the session is freed, and its holder detached, when the operation ends.</summary>
    internal void ForfeitSessionLockLocked(string sessionId, DateTimeOffset now)
    {
        if (_sessions.TryGetValue(sessionId, out var session) && session.Holder is not null && session.LockedUntil > now)
        {
            session.LockedUntil = now;
        }
    }
}
