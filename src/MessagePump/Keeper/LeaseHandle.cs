using System.Diagnostics.CodeAnalysis;

namespace PriorityAsync.MessagePump;

/// <summary>
/// One message kept by a <see cref="LeaseKeeper"/> (<see cref="LeaseKeeper.Keep"/>): its lease is renewed until the handle
/// is disposed, the message is settled through it, the lease is lost or the keeper stops.
/// </summary>
/// <remarks>
/// Settle through the handle (<see cref="CompleteAsync"/>, <see cref="AbandonAsync"/>, <see cref="DeadLetterAsync"/>), or
/// dispose it before settling the message yourself: a renewal refused after either is not a lost lease. A renewal
/// refused while the handle is still kept is: <see cref="LeaseLostToken"/> is canceled and the keeper reports it once.
/// </remarks>
[SuppressMessage("Design", "CA1001:Types that own disposable fields should be disposable", Justification = "The handle is IDisposable, but its Dispose means 'stop renewing', which must leave LeaseLostToken usable afterwards. Its CancellationTokenSource is a plain one (no timer, not linked): it holds nothing that needs releasing.")]
public sealed class LeaseHandle : IDisposable
{
    private readonly LeaseKeeper _keeper;
    private LazyCancellation _lostToken; // its source is made only when someone asks for the token
    private int _released;
    private int _lost;
    private int _renewals;

    internal LeaseHandle(LeaseKeeper keeper, ILeasedMessage message, IMessageSource? source, PumpDelivery? delivery)
    {
        _keeper = keeper;
        Message = message;
        Source = source;
        Delivery = delivery;
    }

    /// <summary>Gets the kept message.</summary>
    public ILeasedMessage Message { get; }

    /// <summary>Gets when the lease expires unless renewed again (the message's <see cref="ILeasedMessage.LockedUntil"/>).</summary>
    public DateTimeOffset LockedUntil => Message.LockedUntil;

    /// <summary>
    /// Gets until when the keeper holds the lock to be held: <see cref="LockedUntil"/> (the expiry the last answered
    /// renewal set), or later while a renewal that most likely reached the broker before that expiry is still unanswered
    /// (on a starved thread pool answers come back long after the broker acted), until the latest that renewal can hold
    /// the lock. When it passes with no renewal answered the keeper marks the lease lost. After the lease is lost or
    /// released it is <see cref="LockedUntil"/>.
    /// </summary>
    public DateTimeOffset HeldUntil => _keeper.HeldUntil(this);

    /// <summary>
    /// Judges the lease now, for code about to act under its lock (a transport handing out a session's next message):
    /// <see langword="true"/> while the keeper holds it (<see cref="HeldUntil"/> is later than now); otherwise
    /// <see langword="false"/>, and the lease is lost out loud from this instant, as at its expiry (<see cref="IsLost"/>,
    /// <see cref="LeaseLostToken"/> canceled, counted and reported). A lease already lost, released or disposed answers
    /// <see langword="false"/>.
    /// </summary>
    /// <returns>Whether the lock is held now.</returns>
    public bool ConfirmHeld() => _keeper.ConfirmHeld(this);

    /// <summary>Gets how many times the keeper has renewed the lease.</summary>
    public int RenewalCount => Volatile.Read(ref _renewals);

    /// <summary>Gets whether the lease was lost while kept (a renewal was refused, or ran out of lock time).</summary>
    public bool IsLost => Volatile.Read(ref _lost) != 0;

    /// <summary>Gets whether the keeper still renews the lease: not disposed, not settled through the handle, not lost, keeper not stopped.</summary>
    public bool IsKept => IsRenewable;

    /// <summary>
    /// Gets a token canceled when the lease is lost while kept, or when a settlement through the handle is refused because
    /// the lock was gone (<see cref="LeaseLostException"/>). Not canceled by <see cref="Dispose"/>, by a settlement that
    /// succeeds, or by the keeper's stop (the lease is then simply no longer renewed).
    /// </summary>
    public CancellationToken LeaseLostToken => _lostToken.Token(IsLost);

    /// <summary>Gets the source whose batch renewals and lock duration the keeper uses, or <see langword="null"/> (renewed one by one through the message).</summary>
    internal IMessageSource? Source { get; }

    /// <summary>Gets the keeper that keeps this lease.</summary>
    internal LeaseKeeper Keeper => _keeper;

    /// <summary>Gets the pump's delivery when a pump owns this lease, else <see langword="null"/>.</summary>
    internal PumpDelivery? Delivery { get; }

    /// <summary>Gets or sets the lease due before this one in the keeper's <see cref="LeaseSchedule"/>.</summary>
    internal LeaseHandle? SchedulePrevious { get; set; }

    /// <summary>Gets or sets the lease due after this one in the keeper's <see cref="LeaseSchedule"/>.</summary>
    internal LeaseHandle? ScheduleNext { get; set; }

    /// <summary>Gets or sets whether the lease is in the keeper's <see cref="LeaseSchedule"/>.</summary>
    internal bool IsScheduled { get; set; }

    /// <summary>Gets or sets when (UTC ticks) the lease must be renewed at the latest, under the renewal rule (the round-trip floor and the half-lock rule).</summary>
    internal long RenewDueTicks { get; set; }

    /// <summary>
    /// Gets or sets the lock time (ticks) the renewal rule planned to have left when the lease is renewed (the renewal
    /// buffer it was scheduled by): what the health check scales its thresholds to. Guarded by the keeper's lock.
    /// </summary>
    internal long PlannedSlackTicks { get; set; }

    /// <summary>Gets or sets from when (UTC ticks) the lease may be renewed with others that fall due.</summary>
    internal long RenewEarliestTicks { get; set; }

    /// <summary>
    /// Gets or sets how many renew calls for this lease are under way (at most
    /// <see cref="LeaseKeeper.MaxRenewalsInFlight"/>: the renewal and those sent while its answer waits). Guarded by the keeper's lock.
    /// </summary>
    internal int RenewalsInFlight { get; set; }

    /// <summary>Gets or sets when (the keeper clock's timestamp) the newest renewal of this lease was sent. Guarded by the keeper's lock.</summary>
    internal long LastRenewalSent { get; set; }

    /// <summary>
    /// Gets or sets when (the keeper clock's timestamp) the first of this lease's renewals now under way was sent (set when
    /// none was under way before); answers since count from the keeper's last one heard. Guarded by the keeper's lock.
    /// </summary>
    internal long OldestUnansweredSent { get; set; }

    /// <summary>
    /// Gets or sets the expiry (UTC ticks) the broker most likely holds while renewals of this lease are unanswered: the
    /// newest one that most likely reached it in time, plus the lock duration; 0 when none. Guarded by the keeper's lock.
    /// </summary>
    internal long PresumedUntilTicks { get; set; }

    /// <summary>
    /// Gets or sets the lock time (ticks) the newest renewal of this lease was sent with, against the expiry the broker
    /// most likely held then: the slack the keeper reports when it is answered. Guarded by the keeper's lock.
    /// </summary>
    internal long SlackAtSendTicks { get; set; }

    /// <summary>
    /// Gets or sets whether the lease is scheduled at its known expiry because a renewal of it is unanswered (and no
    /// hedge is due before): when it falls due with the lock not moved, the lease is lost. Guarded by the keeper's lock.
    /// </summary>
    internal bool AwaitsAnswer { get; set; }

    /// <summary>The failure of the newest renewal that failed transiently (the inner exception if the lock then runs out), or <see langword="null"/>.</summary>
    internal Exception? LastRenewalFailure;

    /// <summary>Gets whether the keeper still renews this lease: not released, not lost.</summary>
    internal bool IsRenewable => Volatile.Read(ref _released) == 0 && Volatile.Read(ref _lost) == 0;

    /// <summary>Gets whether the lease was released: disposed, settled through the handle, or its renewals stopped by its owner or the keeper's stop.</summary>
    internal bool IsReleased => Volatile.Read(ref _released) != 0;

    /// <summary>Stops renewing; <see cref="IsLost"/> and <see cref="LeaseLostToken"/> are left as they are. Idempotent.</summary>
    public void Dispose() => _keeper.Release(this);

    /// <summary>Stops renewing, then completes the message (<see cref="ILeasedMessage.CompleteAsync"/>).</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The message's complete call.</returns>
    /// <exception cref="LeaseLostException">
    /// The lease had expired or the message was already settled. Unless it was settled through a handle before, the keeper
    /// counts a lost lease (<see cref="IsLost"/>, <see cref="LeaseLostToken"/> canceled, reported once).
    /// </exception>
    public Task CompleteAsync(CancellationToken cancellationToken = default) =>
        SettleAsync(() => Message.CompleteAsync(cancellationToken), "complete");

    /// <summary>Stops renewing, then abandons the message for redelivery (<see cref="ILeasedMessage.AbandonAsync"/>).</summary>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The message's abandon call.</returns>
    /// <exception cref="LeaseLostException">
    /// The lease had expired or the message was already settled. Unless it was settled through a handle before, the keeper
    /// counts a lost lease (<see cref="IsLost"/>, <see cref="LeaseLostToken"/> canceled, reported once).
    /// </exception>
    public Task AbandonAsync(CancellationToken cancellationToken = default) =>
        SettleAsync(() => Message.AbandonAsync(cancellationToken), "abandon");

    /// <summary>Stops renewing, then dead-letters the message (<see cref="ILeasedMessage.DeadLetterAsync(string, string?, CancellationToken)"/>).</summary>
    /// <param name="reason">Why the message is dead-lettered.</param>
    /// <param name="description">More detail, or <see langword="null"/>.</param>
    /// <param name="cancellationToken">Cancels the call.</param>
    /// <returns>The message's dead-letter call.</returns>
    /// <exception cref="ArgumentException"><paramref name="reason"/> is null, empty or white space (the lease is still kept).</exception>
    /// <exception cref="LeaseLostException">
    /// The lease had expired or the message was already settled. Unless it was settled through a handle before, the keeper
    /// counts a lost lease (<see cref="IsLost"/>, <see cref="LeaseLostToken"/> canceled, reported once).
    /// </exception>
    public Task DeadLetterAsync(string reason, string? description = null, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(reason);
        return SettleAsync(() => Message.DeadLetterAsync(reason, description, cancellationToken), "dead-letter");
    }

    /// <inheritdoc />
    public override string ToString() => $"{Message.MessageId} ({(IsLost ? "lost" : IsRenewable ? "kept" : "released")}, {RenewalCount} renewals)";

    /// <summary>Marks the lease released; true for the first caller only.</summary>
    internal bool TryRelease() => Interlocked.Exchange(ref _released, 1) == 0;

    /// <summary>Marks the lease lost and cancels <see cref="LeaseLostToken"/>; true for the first caller only.</summary>
    internal bool TryMarkLost()
    {
        if (Interlocked.Exchange(ref _lost, 1) != 0)
        {
            return false;
        }

        _keeper.CountLost();
        _lostToken.Cancel();

        return true;
    }

    internal void CountRenewal() => Interlocked.Increment(ref _renewals);

    /// <summary>
    /// Stops renewing, then settles through <paramref name="settle"/>: a refusal with <see cref="LeaseLostException"/>
    /// is a lost lease unless the message was settled through a handle before (<see cref="LeaseKeeper.SettlementRefused"/>);
    /// a settlement that succeeds makes the message one the keeper refuses to keep again.
    /// </summary>
    private async Task SettleAsync(Func<Task> settle, string operation)
    {
        Dispose();
        try
        {
            await settle();
        }
        catch (LeaseLostException ex)
        {
            _keeper.SettlementRefused(this, ex, operation);
            throw;
        }

        _keeper.Settled(this);
    }
}
