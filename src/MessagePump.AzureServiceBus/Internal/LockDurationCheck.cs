using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Internal;

/// <summary>Compares the lock duration a source was given with the locks of its first receive.</summary>
internal static class LockDurationCheck
{
    /// <summary>
    /// The lock the broker gave the messages of one receive, measured from when the answer arrived: the longest
    /// <c>LockedUntil - answeredAt</c> of the batch (a message that waited in a prefetch buffer has less left, so the
    /// longest is the freshest). It errs short by the receive's round trip and by clock skew.
    /// </summary>
    public static TimeSpan Observe(IReadOnlyList<ServiceBusReceivedMessage> messages, DateTimeOffset answeredAt)
    {
        var longest = TimeSpan.MinValue;
        foreach (var message in messages)
        {
            var left = message.LockedUntil - answeredAt;
            if (left > longest)
            {
                longest = left;
            }
        }

        return longest;
    }

    /// <summary>
    /// The exception that faults a source whose configured lock duration the broker contradicts, or null. The lock seen
    /// at arrival (<paramref name="observed"/>) is a lower bound of the entity's lock duration: the broker locked the
    /// messages before it answered. Adding the receive's round trip gives an upper bound for a message locked by this
    /// receive. The source is faulted only when the configured value lies outside those bounds by more than the
    /// tolerance, so a receive whose answer waited (a starved thread pool delays it by seconds) is not taken for a
    /// wrong setting.
    /// </summary>
    public static InvalidOperationException? Verify(TimeSpan? configured, TimeSpan observed, TimeSpan roundTrip, TimeSpan tolerance, ServiceBusEntity entity)
    {
        if (configured is not { } expected
            || (observed - expected <= tolerance && expected - (observed + roundTrip) <= tolerance))
        {
            return null;
        }

        return new InvalidOperationException(
            $"The lock duration {expected} given for the {entity} is wrong: the messages of the first receive were locked for about {observed:g} " +
            $"(more than {tolerance:g} apart, the receive's {roundTrip:g} round trip allowed for). Set ServiceBusSourceOptions.LockDuration to the entity's LockDuration; the pump's renewal buffer was checked against the wrong value. " +
            "The messages of that receive were abandoned.");
    }
}
