namespace PriorityAsync.MessagePump;

public sealed partial class InMemoryQueue
{
    /// <summary>Releases every lock that has expired at <paramref name="now"/>.</summary>
    /// <remarks>
    /// Looks at the locks only when <paramref name="now"/> has reached the earliest expiry seen (a renewal only moves a
    /// lock later, so that bound stays safe): a renewal of one lease among thousands locked costs no scan of them all.
    /// </remarks>
    private void ExpireLocksLocked(DateTimeOffset now)
    {
        if (now < _nextExpiry)
        {
            return;
        }

        List<Entry>? expired = null;
        var next = DateTimeOffset.MaxValue;
        foreach (var entry in _locked.Values)
        {
            if (now >= entry.LockedUntil)
            {
                (expired ??= []).Add(entry);
            }
            else if (entry.LockedUntil < next)
            {
                next = entry.LockedUntil;
            }
        }

        _nextExpiry = next;

        if (expired is null)
        {
            return;
        }

        // Release in lock order so that redelivery order does not depend on dictionary order.
        expired.Sort(static (a, b) => a.LockedUntil.CompareTo(b.LockedUntil));
        foreach (var entry in expired)
        {
            _leasesLost++;
            ReleaseLocked(entry);
        }
    }

    /// <summary>Ends the current delivery unsettled: the message is visible again, or dead-lettered after its last delivery.</summary>
    private void ReleaseLocked(Entry entry)
    {
        _locked.Remove(entry.LockToken);
        entry.LockToken = Guid.Empty;
        if (entry.DeliveryCount >= _options.MaxDeliveryCount)
        {
            _maxDeliveryDeadLettered++;
            _deadLetters.Add(new InMemoryDeadLetter(entry.MessageId, MaxDeliveryCountExceededReason, entry.DeliveryCount));
            return;
        }

        _available.Enqueue(entry);
        _awaitingRedelivery++;
    }
}
