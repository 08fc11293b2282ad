using System.Diagnostics;
using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Internal;

/// <summary>
/// The lock of one accepted session, shared by its messages: renewing any of them renews it, and losing it loses every
/// one of them. Also the session's order gate: one message is out at a time, and the next is received only once it
/// is settled or lost. While the session is held one renewer keeps the lock: a <see cref="LeaseKeeper"/> in the lease
/// lane of the scheduler that runs the pump (<see cref="KeepWith"/>: the lock is kept as a lease of its own, from the
/// accept to the close, whether or not a message is out), or, for a source used outside any scheduler, a timer on the
/// source's clock (<see cref="StartKeeper"/>). Every renew request goes through one call at a time
/// (<see cref="RenewAsync(DateTimeOffset, CancellationToken)"/>): a request that comes while a call is under way joins
/// it, and one that comes after the lock was renewed since its asker last saw it is answered without a call, so the
/// pump's keeper renewing the message out and the session's keeper never send two calls for one renewal.
/// </summary>
internal sealed class SessionLock : IDisposable
{
    private readonly ServiceBusSessionReceiver _receiver;
    private readonly Lock _gate = new();
    private readonly CancellationTokenSource _stopKeeper = new();
    private Task _keeper = Task.CompletedTask;
    private TimeProvider _clock = TimeProvider.System;
    private TimeSpan _renewAhead;
    private ITimer? _timer;
    private LeaseHandle? _kept;
    private CancellationTokenRegistration _keptLost;
    private Task<DateTimeOffset>? _renewal; // the renew call under way, joined by every request meanwhile; under _gate
    private long _lockedUntilTicks;
    private long _messageKnownUntilTicks; // the expiry the message out was last answered (see RenewAsync(CancellationToken))
    private int _renewCalls;
    private int _renewCallsOffLeaseLane;
    private ServiceBusLeasedMessage? _current;
    private TaskCompletionSource? _currentDone;
    private Exception? _lost;
    private volatile bool _releaseRequested;

    public SessionLock(ServiceBusSessionReceiver receiver, ServiceBusEntity entity)
    {
        _receiver = receiver;
        Entity = entity;
        Volatile.Write(ref _lockedUntilTicks, receiver.SessionLockedUntil.UtcTicks);
    }

    public ServiceBusEntity Entity { get; }

    public string SessionId => _receiver.SessionId;

    /// <summary>The namespace the session belongs to (with <see cref="Entity"/> and <see cref="SessionId"/>, its key in <see cref="SessionHandlers"/>).</summary>
    public string Namespace => _receiver.FullyQualifiedNamespace ?? string.Empty;

    /// <summary>Called (on the thread that settled or lost it) when the session's message out is settled or lost, or the session is lost.</summary>
    public Action? Idle { get; set; }

    public DateTimeOffset LockedUntil => new(Volatile.Read(ref _lockedUntilTicks), TimeSpan.Zero);

    public bool IsLost => Volatile.Read(ref _lost) is not null;

    /// <summary>Whether the session is to be closed once its message out is settled (<see cref="RequestRelease"/>): no further message is received.</summary>
    public bool ReleaseRequested => _releaseRequested;

    /// <summary>Asks the multi-session source to close the session once its message out is settled (a session processor's <c>ReleaseSession</c>).</summary>
    public void RequestRelease()
    {
        _releaseRequested = true;
        Idle?.Invoke(); // the source looks again: a session with nothing out is closed at once
    }

    public bool HasCurrent
    {
        get
        {
            lock (_gate)
            {
                return _current is not null;
            }
        }
    }

    /// <summary>How many renew calls were sent for this lock (requests answered or joined without a call are not counted).</summary>
    public int RenewCalls => Volatile.Read(ref _renewCalls);

    /// <summary>How many of <see cref="RenewCalls"/> were sent from outside a lease lane (from a thread-pool thread, say): none while a keeper keeps the lock.</summary>
    public int RenewCallsOffLeaseLane => Volatile.Read(ref _renewCallsOffLeaseLane);

    /// <summary>Whether a <see cref="LeaseKeeper"/> keeps the lock (<see cref="KeepWith"/>).</summary>
    public bool IsKeptByLeaseKeeper => Volatile.Read(ref _kept) is not null;

    /// <summary>
    /// Renews the lock for the session's message out (its <see cref="ServiceBusLeasedMessage.RenewLockAsync"/>): as
    /// <see cref="RenewAsync(DateTimeOffset, CancellationToken)"/> with the expiry that message was last answered, so
    /// a renewal the session's keeper made meanwhile answers it without a call.
    /// </summary>
    public async Task<DateTimeOffset> RenewAsync(CancellationToken cancellationToken)
    {
        var lockedUntil = await RenewAsync(new DateTimeOffset(Volatile.Read(ref _messageKnownUntilTicks), TimeSpan.Zero), cancellationToken).ConfigureAwait(true);
        Volatile.Write(ref _messageKnownUntilTicks, lockedUntil.UtcTicks);
        return lockedUntil;
    }

    /// <summary>
    /// Renews the session lock for an asker that last saw it expire at <paramref name="knownUntil"/>: answered without a
    /// call when the lock was renewed since (its expiry is later), joined to the call under way when there is one, else
    /// sent. A lost session lock marks the session lost and throws <see cref="LeaseLostException"/>. The call itself is
    /// not canceled by <paramref name="cancellationToken"/> (others may be waiting for it), only the wait for it.
    /// </summary>
    public Task<DateTimeOffset> RenewAsync(DateTimeOffset knownUntil, CancellationToken cancellationToken)
    {
        ThrowIfLost(null);
        TaskCompletionSource<DateTimeOffset>? send = null;
        Task<DateTimeOffset> renewal;
        lock (_gate)
        {
            var current = LockedUntil;
            if (current > knownUntil)
            {
                return Task.FromResult(current);
            }

            if (_renewal is null)
            {
                send = new TaskCompletionSource<DateTimeOffset>();
                _renewal = send.Task;
            }

            renewal = _renewal;
        }

        if (send is not null)
        {
            _ = SendRenewalAsync(send);
        }

        return renewal.WaitAsync(cancellationToken);
    }

    /// <summary>Throws <see cref="LeaseLostException"/> when the session lock is lost.</summary>
    public void ThrowIfLost(ServiceBusLeasedMessage? message)
    {
        var lost = Volatile.Read(ref _lost);
        if (lost is not null)
        {
            throw new LeaseLostException($"The lock of {this} is lost, and with it every message of the session{(message is null ? string.Empty : $" ({message})")}.", lost);
        }
    }

    /// <summary>
    /// Marks the session lost: every later operation on it throws, and the order gate opens. The lost message's
    /// handler may still run: the session stays busy in <see cref="SessionHandlers"/> until it ends (<see cref="Ended"/>).
    /// </summary>
    public void MarkLost(Exception exception)
    {
        TaskCompletionSource? done;
        lock (_gate)
        {
            _lost ??= exception;
            done = _currentDone;
            _current = null;
            _currentDone = null;
        }

        done?.TrySetResult(); // the keeper sees the loss at its next turn
        Idle?.Invoke();
    }

    /// <summary>
    /// Until when the session's renewer holds the lock to be held, the expiry its messages read
    /// (<see cref="ServiceBusLeasedMessage.LockedUntil"/>): with a <see cref="LeaseKeeper"/>, its verdict
    /// (<see cref="LeaseHandle.HeldUntil"/>: later than <see cref="LockedUntil"/> while a renewal that most likely reached
    /// the broker in time is unanswered), so that the pump keeping the message out, its hand-off and the receive path judge
    /// the lock as the session's keeper does; with the timer, or once lost, <see cref="LockedUntil"/>.
    /// </summary>
    public DateTimeOffset HeldUntil => !IsLost && Volatile.Read(ref _kept) is { } kept ? kept.HeldUntil : LockedUntil;

    /// <summary>
    /// Whether the lock is held now, for a message about to be handed out under it: judged by the session's keeper when a
    /// <see cref="LeaseKeeper"/> keeps it (which, when it is not, loses the session lease out loud: counted, logged, its
    /// event raised), else by <see cref="LockedUntil"/> (the last renewal answered). False once the session is lost.
    /// </summary>
    public bool ConfirmHeld(DateTimeOffset now)
    {
        if (IsLost)
        {
            return false;
        }

        return Volatile.Read(ref _kept) is { } kept ? kept.ConfirmHeld() : LockedUntil > now;
    }

    /// <summary>Records <paramref name="message"/> as the one message of the session that is out, here and process-wide.</summary>
    public void SetCurrent(ServiceBusLeasedMessage message)
    {
        lock (_gate)
        {
            Debug.Assert(_current is null, "One message of a session is out at a time.");
            _current = message;
            _currentDone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            Volatile.Write(ref _messageKnownUntilTicks, Volatile.Read(ref _lockedUntilTicks));
        }

        SessionHandlers.Enter(Namespace, Entity, SessionId, message);
    }

    /// <summary>Opens the order gate when <paramref name="message"/> was the one out, and ends its occupancy of the session.</summary>
    public void Settled(ServiceBusLeasedMessage message)
    {
        TaskCompletionSource? done = null;
        lock (_gate)
        {
            if (ReferenceEquals(_current, message))
            {
                done = _currentDone;
                _current = null;
                _currentDone = null;
            }
        }

        Ended(message);
        done?.TrySetResult();
        if (done is not null)
        {
            Idle?.Invoke();
        }
    }

    /// <summary>No handler of <paramref name="message"/> runs any more (the pump's processing of it ended, or it was settled).</summary>
    public void Ended(ServiceBusLeasedMessage message) => SessionHandlers.Leave(Namespace, Entity, SessionId, message);

    /// <summary>
    /// Keeps the lock with <paramref name="keeper"/> (in its scheduler's lease lane) until <see cref="StopKeeperAsync"/>,
    /// in place of the timer of <see cref="StartKeeper"/>: the keeper renews it by its rules (at most two calls per lock
    /// duration), and a lease it finds lost — the broker refused a renewal, or the lock's known expiry passed with no
    /// renewal answered — marks the session lost at that instant, which loses the message out with it (its lease reads
    /// the same expiry, and every later operation on it throws).
    /// </summary>
    /// <param name="keeper">The keeper.</param>
    /// <param name="source">
    /// The session's source: it tells the keeper the entity's lock duration, from which the keeper's rules (half the lock,
    /// the request legs of its renewals, the latest the broker may hold a lock whose renewal is unanswered) are read.
    /// </param>
    /// <exception cref="ArgumentException">The lock has expired already.</exception>
    /// <exception cref="InvalidOperationException">The keeper's scheduler no longer accepts work.</exception>
    /// <exception cref="ObjectDisposedException">The keeper or its scheduler was stopped.</exception>
    public void KeepWith(LeaseKeeper keeper, IMessageSource source)
    {
        ArgumentNullException.ThrowIfNull(keeper);
        Debug.Assert(_kept is null, "A session lock is kept by one keeper.");
        var kept = keeper.Keep(new SessionLease(this), source);
        Volatile.Write(ref _kept, kept);
        _timer?.Change(Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan); // one renewer: the keeper
        _keptLost = kept.LeaseLostToken.Register(
            static state =>
            {
                var sessionLock = (SessionLock)state!;
                sessionLock.MarkLost(new LeaseLostException($"The lock of {sessionLock} is lost: the broker refused its renewal, or its known expiry ({sessionLock.LockedUntil:O}) passed with no renewal answered."));
            },
            this);
    }

    /// <summary>
    /// Starts the keeper that renews the session lock when half of <paramref name="lockDuration"/> or less is left,
    /// on <paramref name="clock"/>, until <see cref="StopKeeperAsync"/> or the lock is lost. A renewal that finds the
    /// lock gone marks the session lost; a transient failure is retried until the lock's known expiry, which then
    /// marks it lost (expired).
    /// </summary>
    public void StartKeeper(TimeProvider clock, TimeSpan lockDuration)
    {
        Debug.Assert(lockDuration > TimeSpan.Zero, "A lock duration is positive.");
        _clock = clock;
        _renewAhead = lockDuration / 2;
        _timer = clock.CreateTimer(static state => ((SessionLock)state!).OnKeeperDue(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
        ScheduleKeeper(null);
    }

    /// <summary>Stops the keeper and waits for a renewal it has under way.</summary>
    public async Task StopKeeperAsync()
    {
        if (Volatile.Read(ref _kept) is { } kept)
        {
            await _keptLost.DisposeAsync().ConfigureAwait(true);
            kept.Dispose(); // released, not lost: closing the session is no loss
        }

        await _stopKeeper.CancelAsync().ConfigureAwait(true);
        if (_timer is { } timer)
        {
            await timer.DisposeAsync().ConfigureAwait(true);
        }

#pragma warning disable VSTHRD003 // the keeper's own renewal task, started by its timer
        await Volatile.Read(ref _keeper).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
#pragma warning restore VSTHRD003
    }

    /// <summary>Releases the keeper's stop token; call after <see cref="StopKeeperAsync"/>.</summary>
    public void Dispose() => _stopKeeper.Dispose();

    /// <summary>Waits until no message of the session is out, up to <paramref name="maxWait"/>; false when one still is.</summary>
    public async Task<bool> WaitUntilIdleAsync(TimeSpan maxWait, TimeProvider clock, CancellationToken cancellationToken)
    {
        Task? done;
        lock (_gate)
        {
            done = _currentDone?.Task;
        }

        if (done is null)
        {
            return true;
        }

        if (maxWait <= TimeSpan.Zero)
        {
            return done.IsCompleted;
        }

        try
        {
            await done.WaitAsync(maxWait, clock, cancellationToken).ConfigureAwait(true); // the session's message ends in a lane: false would queue the rest to the pool
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
    }

    public override string ToString() => $"session '{SessionId}' of the {Entity}";

    /// <summary>Sends the one renew call that every request joins until it is answered.</summary>
    private async Task SendRenewalAsync(TaskCompletionSource<DateTimeOffset> renewal)
    {
        try
        {
            CancellationToken stop;
            try
            {
                stop = _stopKeeper.Token;
            }
            catch (ObjectDisposedException)
            {
                stop = new CancellationToken(canceled: true);
            }

            Interlocked.Increment(ref _renewCalls);
            if (PriorityScheduler.CurrentLane?.Priority != LanePriority.Lease || Thread.CurrentThread.IsThreadPoolThread)
            {
                Interlocked.Increment(ref _renewCallsOffLeaseLane);
            }

            // No ConfigureAwait(false): the request comes from a keeper in the lease lane, and the answer goes back there.
            await _receiver.RenewSessionLockAsync(stop).ConfigureAwait(true);
            var lockedUntil = _receiver.SessionLockedUntil;
            lock (_gate)
            {
                Volatile.Write(ref _lockedUntilTicks, lockedUntil.UtcTicks);
                _renewal = null;
            }

            renewal.TrySetResult(lockedUntil);
        }
        catch (Exception ex)
        {
            // Ended by the session's close: the lock is being released, and whoever joined this renewal (the message out,
            // the keeper of a lease released a moment ago) hears that it no longer holds it, as the contract says.
            var closing = ex is OperationCanceledException && _stopKeeper.IsCancellationRequested;
            var translated = closing
                ? new LeaseLostException($"Renewing the lock of {this} ended: the session is closing, and its lock is released.", ex)
                : ServiceBusErrors.Translate(ex, $"Renewing the lock of {this}", CancellationToken.None) ?? ex;
            if (translated is LeaseLostException && !closing)
            {
                MarkLost(translated);
            }

            lock (_gate)
            {
                _renewal = null;
            }

            renewal.TrySetException(translated);
        }
    }

    private void ScheduleKeeper(TimeSpan? after)
    {
        if (_stopKeeper.IsCancellationRequested || IsLost || IsKeptByLeaseKeeper || _timer is not { } timer)
        {
            return;
        }

        var wait = after ?? LockedUntil - _renewAhead - _clock.GetUtcNow();
        try
        {
            timer.Change(wait > TimeSpan.Zero ? wait : TimeSpan.Zero, Timeout.InfiniteTimeSpan);
        }
        catch (ObjectDisposedException)
        {
            // stopped meanwhile
        }
    }

    private void OnKeeperDue() => Volatile.Write(ref _keeper, RenewFromKeeperAsync());

    private async Task RenewFromKeeperAsync()
    {
        var stop = _stopKeeper.Token;
        if (stop.IsCancellationRequested || IsLost || IsKeptByLeaseKeeper)
        {
            return;
        }

        if (LockedUntil - _renewAhead > _clock.GetUtcNow())
        {
            ScheduleKeeper(null); // the pump's keeper renewed it meanwhile
            return;
        }

        try
        {
            await RenewAsync(LockedUntil, stop).ConfigureAwait(false);
            ScheduleKeeper(null);
        }
        catch (LeaseLostException)
        {
            // RenewAsync marked the session lost
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // stopped
        }
        catch (Exception ex)
        {
            var now = _clock.GetUtcNow();
            if (LockedUntil <= now)
            {
                MarkLost(new LeaseLostException($"The lock of {this} expired at {LockedUntil:O}: no renewal succeeded before it ({ex.Message}).", ex));
                return;
            }

            ScheduleKeeper(TimeSpan.FromTicks(Math.Clamp((LockedUntil - now).Ticks / 4, TimeSpan.TicksPerMillisecond * 100, TimeSpan.TicksPerSecond)));
        }
    }
}
