using System.Diagnostics;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

public sealed partial class ServiceBusTestQueue
{
    internal const string TtlExpired = "TTLExpiredException";

    private readonly TimeToLive _timeToLive;

    /// <summary>Removes available messages whose time-to-live ran out on <paramref name="now"/>: dead-lettered when the entity asks for it, dropped otherwise.</summary>
    private void ExpireLocked(DateTimeOffset now)
    {
        List<StoredMessage>? expired = null;
        foreach (var message in _available.Values)
        {
            if (message.ExpiresAt <= now)
            {
                (expired ??= []).Add(message);
            }
        }

        if (expired is null)
        {
            return;
        }

        Debug.Assert(!IsDeadLetterQueue, "Messages in a dead-letter sub-queue never expire.");
        foreach (var message in expired)
        {
            _available.Remove(message.SequenceNumber);
            if (_timeToLive.DeadLetterOnExpiry)
            {
                DeadLetterLocked(message, TtlExpired, "The message expired and was dead lettered.", now);
            }
        }
    }

    /// <summary>An entity's time-to-live rules: its default (the longest a message may live) and what happens on expiry.</summary>
    private readonly record struct TimeToLive(TimeSpan Default, bool DeadLetterOnExpiry)
    {
        /// <summary>
        /// The expiry of a message enqueued at <paramref name="enqueuedAt"/>: the shorter of its header ttl and the entity's
        /// default. When it expires, the header ttl, creation-time and absolute-expiry-time are rewritten as the service does, so the client's
        /// TimeToLive and ExpiresAt read right. Null (and the message unchanged) when it never expires.
        /// </summary>
        public DateTimeOffset? Apply(ref byte[] encoded, DateTimeOffset enqueuedAt)
        {
            using var message = AmqpCodec.Decode(encoded);
            var ttl = Default;
            if (message.Header?.Ttl is { } headerTtl && TimeSpan.FromMilliseconds(headerTtl) < ttl)
            {
                ttl = TimeSpan.FromMilliseconds(headerTtl);
            }

            if (ttl == TimeSpan.MaxValue || ttl > DateTimeOffset.MaxValue - enqueuedAt)
            {
                return null;
            }

            var expiresAt = enqueuedAt + ttl;
            message.Header!.Ttl = (uint)Math.Min(uint.MaxValue, ttl.TotalMilliseconds);
            message.Properties.AbsoluteExpiryTime = expiresAt.UtcDateTime;
            message.Properties.CreationTime = enqueuedAt.UtcDateTime;
            encoded = AmqpCodec.ToBytes(message);
            return expiresAt;
        }
    }
}
