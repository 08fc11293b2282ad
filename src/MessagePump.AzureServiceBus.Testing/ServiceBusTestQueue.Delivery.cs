using System.Diagnostics;
using System.Globalization;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

public sealed partial class ServiceBusTestQueue
{
    /// <summary>
    /// Judges every lock on <paramref name="now"/>: expired messages come back (or are dead-lettered), expired sessions
    /// are freed and their holders are added to <paramref name="lostSessionHolders"/> (their receive links are detached
    /// with session-lock-lost once the broker's lock is released, as Service Bus does).
    /// </summary>
    internal void SweepLocked(DateTimeOffset now, List<IConsumer> lostSessionHolders)
    {
        SweepSessionsLocked(now, lostSessionHolders);
        List<StoredMessage>? expired = null;
        foreach (var message in _locked.Values)
        {
            if (!IsSessionBound(message) && message.LockedUntil <= now)
            {
                (expired ??= []).Add(message);
            }
        }

        if (expired is not null)
        {
            foreach (var message in expired)
            {
                ReturnLocked(message, now);
            }
        }

        ExpireLocked(now);
        _consumers.RemoveAll(c => c.IsClosed);
    }

    /// <summary>Frees the sessions whose locks ran out on <paramref name="now"/> and adds their holders to <paramref name="lostSessionHolders"/>.</summary>
    internal void SweepSessionsLocked(DateTimeOffset now, List<IConsumer> lostSessionHolders)
    {
        List<string>? expiredSessions = null;
        foreach (var session in _sessions.Values)
        {
            if (session.Holder is not null && session.LockedUntil <= now)
            {
                (expiredSessions ??= []).Add(session.SessionId);
            }
        }

        if (expiredSessions is not null)
        {
            foreach (var id in expiredSessions)
            {
                var session = _sessions[id];
                Debug.Assert(session.Holder is not null, "Only held sessions expire.");
                lostSessionHolders.Add(session.Holder);
                ReleaseSessionLocked(session, now);
            }
        }
    }

    /// <summary>The earliest lock or session-lock expiry, if any.</summary>
    internal DateTimeOffset? NextExpiryLocked(DateTimeOffset now)
    {
        DateTimeOffset? next = null;
        foreach (var message in _available.Values)
        {
            if (message.VisibleAt > now && (next is null || message.VisibleAt < next))
            {
                next = message.VisibleAt;
            }

            if (message.ExpiresAt is { } expiresAt && (next is null || expiresAt < next))
            {
                next = expiresAt;
            }
        }

        foreach (var message in _locked.Values)
        {
            if (!IsSessionBound(message) && (next is null || message.LockedUntil < next))
            {
                next = message.LockedUntil;
            }
        }

        foreach (var session in _sessions.Values)
        {
            if (session.Holder is not null && (next is null || session.LockedUntil < next))
            {
                next = session.LockedUntil;
            }
        }

        return next;
    }

    /// <summary>Hands available messages to consumers with credit, round robin, locking each one.</summary>
    internal void CollectLocked(DateTimeOffset now, List<PendingDelivery> into)
    {
        ExpireLocked(now); // a message that came back during this operation (abandoned, released) may have expired meanwhile
        if (_consumers.Count == 0 || _available.Count == 0)
        {
            return;
        }

        bool progress;
        do
        {
            progress = false;
            for (var i = 0; i < _consumers.Count && _available.Count > 0; i++)
            {
                var consumer = _consumers[(_nextConsumer + i) % _consumers.Count];
                if (consumer.IsClosed || consumer.Credit <= 0 || !HoldsItsSession(consumer))
                {
                    continue;
                }

                var message = NextFor(consumer, now);
                if (message is null)
                {
                    continue;
                }

                _available.Remove(message.SequenceNumber);
                consumer.Credit--;
                progress = true;
                var headerCount = message.DeliveryCount;
                message.DeliveryCount++;
                if (consumer.ReceiveAndDelete)
                {
                    CountCompletionLocked(message);
                    into.Add(new PendingDelivery(consumer, this, message, Guid.NewGuid(), headerCount, now));
                    continue;
                }

                message.LockToken = Guid.NewGuid();
                message.Holder = consumer;
                message.LockedUntil = consumer.SessionId is { } sessionId ? _sessions[sessionId].LockedUntil : now + LockDuration;
                _locked.Add(message.LockToken, message);
                into.Add(new PendingDelivery(consumer, this, message, message.LockToken, headerCount, message.LockedUntil));
            }

            _nextConsumer = _consumers.Count == 0 ? 0 : (_nextConsumer + 1) % _consumers.Count;
        }
        while (progress && _available.Count > 0);
    }

    /// <summary>Puts back a delivery that could not be sent (its link closed first).</summary>
    internal void UndoDeliveryLocked(PendingDelivery delivery)
    {
        if (delivery.Consumer.ReceiveAndDelete)
        {
            _completedCount--;
            _completions[delivery.Message.MessageId]--;
        }
        else if (!_locked.Remove(delivery.LockToken))
        {
            return;
        }

        delivery.Message.Holder = null;
        delivery.Message.DeliveryCount--;
        _available[delivery.Message.SequenceNumber] = delivery.Message;
    }

    private StoredMessage? NextFor(IConsumer consumer, DateTimeOffset now)
    {
        foreach (var message in _available.Values)
        {
            if (message.VisibleAt <= now && (consumer.SessionId is null ? message.SessionId is null || !RequiresSession : string.Equals(message.SessionId, consumer.SessionId, StringComparison.Ordinal)))
            {
                return message;
            }
        }

        return null;
    }

    /// <summary>An abandoned or expired message: back to the queue, or to the dead-letter sub-queue after the max delivery count.</summary>
    private void ReturnLocked(StoredMessage message, DateTimeOffset now)
    {
        _locked.Remove(message.LockToken);
        message.Holder = null;
        if (message.DeliveryCount >= MaxDeliveryCount)
        {
            DeadLetterLocked(
                message,
                MaxDeliveryCountExceeded,
                string.Create(CultureInfo.InvariantCulture, $"Message could not be consumed after {MaxDeliveryCount} delivery attempts."),
                now);
            return;
        }

        if (message.Deferred)
        {
            _deferred.Add(message.SequenceNumber, message);
            return;
        }

        _available.Add(message.SequenceNumber, message);
    }

    private void DeadLetterLocked(StoredMessage message, string? reason, string? description, DateTimeOffset now)
    {
        _deadLetters.Add(new ServiceBusTestDeadLetter(message.MessageId, reason, description, message.DeliveryCount));
        if (DeadLetterQueue is { } deadLetterQueue)
        {
            var encoded = AmqpCodec.WithDeadLetterProperties(message.Encoded, reason, description);
            deadLetterQueue.EnqueueLocked(encoded, message.MessageId, message.SessionId, now, Path, message.DeliveryCount);
        }
    }

    private void CountCompletionLocked(StoredMessage message)
    {
        _completedCount++;
        _completions[message.MessageId] = _completions.GetValueOrDefault(message.MessageId) + 1;
    }
}
