namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

public sealed partial class ServiceBusTestQueue
{
    internal SessionLock? HeldSessionLocked(string sessionId) =>
        _sessions.TryGetValue(sessionId, out var session) && session.Holder is not null ? session : null;

    internal SessionLock GetOrAddSessionLocked(string sessionId)
    {
        if (!_sessions.TryGetValue(sessionId, out var session))
        {
            session = new SessionLock(sessionId);
            _sessions.Add(sessionId, session);
        }

        return session;
    }

    /// <summary>
    /// Locks a session for a consumer: the requested one, or (when null) the unlocked session with the oldest available
    /// message. Returns null when the requested session is locked by another receiver, or when none is available.
    /// </summary>
    internal SessionLock? TryAcquireSessionLocked(IConsumer consumer, string? requested, DateTimeOffset now)
    {
        SessionLock? session;
        if (requested is not null)
        {
            session = GetOrAddSessionLocked(requested);
            if (session.Holder is not null)
            {
                return null;
            }
        }
        else
        {
            session = null;
            foreach (var message in _available.Values)
            {
                if (message.VisibleAt <= now && message.SessionId is { } id && !(_sessions.TryGetValue(id, out var existing) && existing.Holder is not null))
                {
                    session = GetOrAddSessionLocked(id);
                    break;
                }
            }

            if (session is null)
            {
                return null;
            }
        }

        session.Holder = consumer;
        session.LockedUntil = now + LockDuration;
        return session;
    }

    /// <summary>A consumer's link closed: a session it held is released at once (its locked messages come back).</summary>
    internal void ReleaseConsumerLocked(IConsumer consumer, DateTimeOffset now)
    {
        _consumers.Remove(consumer);
        if (consumer.SessionId is { } sessionId && _sessions.TryGetValue(sessionId, out var session) && ReferenceEquals(session.Holder, consumer))
        {
            ReleaseSessionLocked(session, now);
        }
    }

    private void ReleaseSessionLocked(SessionLock session, DateTimeOffset now)
    {
        session.Holder = null;
        var held = _locked.Values.Where(m => string.Equals(m.SessionId, session.SessionId, StringComparison.Ordinal)).ToList();
        foreach (var message in held)
        {
            ReturnLocked(message, now);
        }
    }

    /// <summary>False for a session receiver whose session lock expired (or was taken over): it gets nothing more.</summary>
    private bool HoldsItsSession(IConsumer consumer) =>
        consumer.SessionId is not { } sessionId
        || (_sessions.TryGetValue(sessionId, out var session) && ReferenceEquals(session.Holder, consumer));

    /// <summary>True when the message's lock is its session's lock (a session entity).</summary>
    private bool IsSessionBound(StoredMessage message) => RequiresSession && message.SessionId is not null;
}
