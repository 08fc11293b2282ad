namespace PriorityAsync.MessagePump;

/// <summary>
/// The outcome of renewing one message's lease in a batch (<see cref="IMessageSource.RenewBatchAsync"/>): renewed with
/// its new expiry, or the failure of that message alone.
/// </summary>
public readonly record struct LeaseRenewal
{
    private LeaseRenewal(DateTimeOffset lockedUntil, Exception? failure)
    {
        LockedUntil = lockedUntil;
        Failure = failure;
    }

    /// <summary>Gets the new expiry of the lease when it was renewed; <see langword="default"/> when it failed.</summary>
    public DateTimeOffset LockedUntil { get; }

    /// <summary>
    /// Gets why the lease was not renewed, or <see langword="null"/> when it was: <see cref="LeaseLostException"/> when the
    /// lease had expired or the message was settled, <see cref="TransientTransportException"/> when renewing it alone is
    /// worth retrying, <see cref="OperationCanceledException"/> when the caller's token stopped its call.
    /// </summary>
    public Exception? Failure { get; }

    /// <summary>Gets whether the lease was renewed (until <see cref="LockedUntil"/>).</summary>
    public bool IsRenewed => Failure is null;

    /// <summary>The lease was renewed until <paramref name="lockedUntil"/>.</summary>
    /// <param name="lockedUntil">The lease's new expiry, as the message's <see cref="ILeasedMessage.LockedUntil"/> now reports it.</param>
    /// <returns>The outcome.</returns>
    public static LeaseRenewal Renewed(DateTimeOffset lockedUntil) => new(lockedUntil, null);

    /// <summary>The lease was not renewed because of <paramref name="failure"/>.</summary>
    /// <param name="failure">
    /// Why: <see cref="LeaseLostException"/>, <see cref="TransientTransportException"/> or
    /// <see cref="OperationCanceledException"/> (see <see cref="Failure"/>).
    /// </param>
    /// <returns>The outcome.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="failure"/> is null.</exception>
    public static LeaseRenewal Failed(Exception failure)
    {
        ArgumentNullException.ThrowIfNull(failure);
        return new(default, failure);
    }

    /// <inheritdoc />
    public override string ToString() => Failure is null ? $"renewed until {LockedUntil:O}" : $"failed: {Failure.GetType().Name}";
}
