namespace PriorityAsync.MessagePump.AzureServiceBus.Internal;

/// <summary>
/// A session lock seen as a lease, so that a <see cref="LeaseKeeper"/> keeps it from the accept to the close
/// (<see cref="SessionLock.KeepWith"/>). It is never settled: the session is released by closing its receiver, so the
/// settlements refuse. Its renewals go through the session's one renew call (<see cref="SessionLock.RenewAsync(DateTimeOffset, CancellationToken)"/>)
/// with the expiry this lease was last answered, so a renewal made for the message out meanwhile answers it without a call.
/// </summary>
internal sealed class SessionLease(SessionLock sessionLock) : ILeasedMessage
{
    private long _knownUntilTicks = sessionLock.LockedUntil.UtcTicks;

    public string MessageId => $"session-lock:{sessionLock.SessionId}";

    public ReadOnlyMemory<byte> Body => ReadOnlyMemory<byte>.Empty;

    public int DeliveryCount => 1;

    public DateTimeOffset LockedUntil => sessionLock.LockedUntil;

    public async Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default)
    {
        // No ConfigureAwait(false): the keeper calls from its lease lane, and its continuation belongs there.
        var lockedUntil = await sessionLock.RenewAsync(new DateTimeOffset(Volatile.Read(ref _knownUntilTicks), TimeSpan.Zero), cancellationToken).ConfigureAwait(true);
        Volatile.Write(ref _knownUntilTicks, lockedUntil.UtcTicks);
        return lockedUntil;
    }

    public Task CompleteAsync(CancellationToken cancellationToken = default) => throw NotSettled();

    public Task AbandonAsync(CancellationToken cancellationToken = default) => throw NotSettled();

    public Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default) => throw NotSettled();

    public override string ToString() => $"the lock of {sessionLock}";

    private NotSupportedException NotSettled() => new($"{this} is released by closing the session's receiver, not settled.");
}
