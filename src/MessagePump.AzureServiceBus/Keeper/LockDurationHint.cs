using System.Diagnostics;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// What a <see cref="LeaseKeeper"/> is told of a kept Service Bus message's source: the entity's lock duration, which
/// lets the keeper pipeline renewals while answers wait. The SDK's consumers do not say it, so it starts as the lock
/// left when the message was kept (at most the duration) and is learnt from each renewal (<see cref="Learn"/>): the
/// expiry a renewal sets less the time it was sent is the lock duration plus the renewal's way to the broker, and the
/// least of those seen is the duration up to the quickest way seen (and the broker clock's lead over ours, as
/// everywhere the keeper reads a Service Bus expiry). Taking the lock left at hand-off as the duration, as before,
/// spaced renewals by a fraction of the lock and counted the missing lock as time on the way to the broker, which
/// moved renewals earlier still (about 5 renew calls per lock duration in a user trial).
/// Renewals go through the message (<see cref="IMessageSource.RenewBatchAsync"/>'s default); nothing is received through it.
/// </summary>
internal sealed class LockDurationHint : IMessageSource
{
    private readonly TimeProvider _clock;
    private readonly Lock _gate = new();
    private long _lockDurationTicks;
    private bool _learnt;

    /// <summary>Initializes a hint whose lock duration starts as <paramref name="lockLeft"/> (positive), on the keeper's clock.</summary>
    public LockDurationHint(TimeSpan lockLeft, TimeProvider clock)
    {
        Debug.Assert(lockLeft > TimeSpan.Zero, "A hint starts from the lock left, which is positive.");
        _lockDurationTicks = lockLeft.Ticks;
        _clock = clock;
    }

    /// <inheritdoc />
    public TimeSpan? LockDuration => TimeSpan.FromTicks(Volatile.Read(ref _lockDurationTicks));

    /// <inheritdoc />
    public string MessagingSystem => ServiceBusMessageSource.MessagingSystemName;

    /// <summary>Gets the time on the keeper's clock: read it just before a renew call, for <see cref="Learn"/>.</summary>
    public DateTimeOffset Now => _clock.GetUtcNow();

    /// <summary>
    /// A renewal sent at <paramref name="sentAt"/> (<see cref="Now"/>) was answered with <paramref name="renewedUntil"/>:
    /// the lock duration is at most <c>renewedUntil - sentAt</c>, and the first answer replaces the lock left at hand-off.
    /// </summary>
    public void Learn(DateTimeOffset sentAt, DateTimeOffset renewedUntil)
    {
        var seen = (renewedUntil - sentAt).Ticks;
        if (seen <= 0)
        {
            return; // not an answer about this lock's duration (a clock far behind the broker's): keep what is known
        }

        lock (_gate)
        {
            var known = Volatile.Read(ref _lockDurationTicks);
            Volatile.Write(ref _lockDurationTicks, _learnt ? Math.Min(known, seen) : seen);
            _learnt = true;
        }
    }

    /// <inheritdoc />
    public Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default) =>
        throw new NotSupportedException("A kept Service Bus message's source only tells the keeper its lock duration; receive with the SDK.");
}
