using Azure.Messaging.ServiceBus;
using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// An <see cref="IMessageSource"/> over one accepted session (a <see cref="ServiceBusSessionReceiver"/>): its messages
/// are handed out one at a time, in the session's order, the next only once the previous one is settled or lost.
/// The session lock is the lease, kept by one renewer from the accept until the source is disposed, whether or not a
/// message is out: a <see cref="LeaseKeeper"/> in the lease lane of the scheduler whose pump receives from the source
/// (found at the first receive; a <see cref="ServiceBusMultiSessionSource"/> or a <see cref="ServiceBusPumpSessionProcessor"/>
/// hands its own), or, for a source received from outside any <see cref="PriorityScheduler"/>, a timer on
/// <see cref="ServiceBusSourceOptions.TimeProvider"/> that renews it when half of it or less is left. A message's
/// <see cref="ServiceBusLeasedMessage.RenewLockAsync"/> (the pump's keeper renewing the message out) joins that renewer's
/// call, or is answered by its last renewal, instead of sending a call of its own. A lost or
/// expired session lock loses every message of the session: <see cref="IsSessionLost"/> turns true, every later
/// operation throws <see cref="LeaseLostException"/>, and receives return nothing (a message received as the lock
/// ran out is never handed out); accept another session. A session is never in two handlers of this process at once:
/// a session accepted again after its lock was lost delivers only once the handler of its earlier acceptance's
/// message has ended (the pump tells the message) or that message was settled.
/// </summary>
public sealed class ServiceBusSessionMessageSource : IMessageSource, IAsyncDisposable
{
    private readonly ServiceBusSessionReceiver _receiver;
    private readonly bool _ownsReceiver;
    private readonly ServiceBusSourceOptions _options;
    private readonly TimeProvider _clock;
    private readonly SessionLock _lock;
    private readonly ManagementLink _managementLink;
    private volatile Exception? _fault;
    private LeaseKeeper? _ownKeeper;

    /// <summary>Wraps a session receiver you accepted (and dispose after the source).</summary>
    /// <param name="receiver">A peek-lock session receiver.</param>
    /// <param name="options">The options; <see langword="null"/> for the defaults. Copied and validated here.</param>
    /// <exception cref="ArgumentNullException"><paramref name="receiver"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="receiver"/> is in ReceiveAndDelete mode or closed, or an option breaks its rule.</exception>
    public ServiceBusSessionMessageSource(ServiceBusSessionReceiver receiver, ServiceBusSourceOptions? options = null)
        : this(receiver, ServiceBusMessageSource.ParseEntity(receiver), (options ?? new ServiceBusSourceOptions()).LockDuration, options, ownsReceiver: false)
    {
    }

    internal ServiceBusSessionMessageSource(ServiceBusSessionReceiver receiver, ServiceBusEntity entity, TimeSpan? lockDuration, ServiceBusSourceOptions? options, bool ownsReceiver)
    {
        ArgumentNullException.ThrowIfNull(receiver);
        ServiceBusMessageSource.ThrowIfUnusable(receiver, entity, nameof(receiver));
        _options = (options ?? new ServiceBusSourceOptions()).Clone();
        _options.Validate();
        _receiver = receiver;
        _ownsReceiver = ownsReceiver;
        _clock = _options.TimeProvider ?? TimeProvider.System;
        _lock = new SessionLock(receiver, entity);
        _managementLink = new ManagementLink(receiver, OpenManagementLinkAsync);
        Entity = entity;
        LockDuration = lockDuration;

        // Unknown lock duration: the accept's lock is a fresh one, so what is left of it now is its duration.
        var keptFor = lockDuration ?? _lock.LockedUntil - _clock.GetUtcNow();
        _lock.StartKeeper(_clock, keptFor > TimeSpan.Zero ? keptFor : _options.MaxWaitTime * 2);
    }

    /// <summary>Gets the entity the session belongs to.</summary>
    public ServiceBusEntity Entity { get; }

    /// <summary>Gets the session's identifier.</summary>
    public string SessionId => _lock.SessionId;

    /// <summary>Gets when the session lock expires unless renewed.</summary>
    public DateTimeOffset SessionLockedUntil => _lock.LockedUntil;

    /// <summary>Gets whether the session lock was lost (with every message of the session).</summary>
    public bool IsSessionLost => _lock.IsLost;

    /// <summary>Gets the receiver.</summary>
    public ServiceBusSessionReceiver Receiver => _receiver;

    /// <summary>
    /// Reads the session's state for a processor's event args. A session whose lock is lost answers
    /// <see cref="ServiceBusFailureReason.SessionLockLost"/>, as the SDK does for a session lock it knows lost: the SDK
    /// closes a session receiver whose link the broker detached for the loss, and would answer the
    /// <see cref="ObjectDisposedException"/> of a closed receiver instead, which tells the handler nothing.
    /// </summary>
    internal async Task<BinaryData> ReadStateAsync(CancellationToken cancellationToken)
    {
        ThrowIfSessionLost("read the state of", null);
        try
        {
            return await _receiver.GetSessionStateAsync(cancellationToken).ConfigureAwait(true);
        }
        catch (ObjectDisposedException ex) when (IsSessionLost)
        {
            ThrowIfSessionLost("read the state of", ex);
            throw;
        }
    }

    /// <summary>Writes the session's state for a processor's event args; a lost session answers as in <see cref="ReadStateAsync"/>.</summary>
    internal async Task WriteStateAsync(BinaryData? sessionState, CancellationToken cancellationToken)
    {
        ThrowIfSessionLost("set the state of", null);
        try
        {
            await _receiver.SetSessionStateAsync(sessionState, cancellationToken).ConfigureAwait(true);
        }
        catch (ObjectDisposedException ex) when (IsSessionLost)
        {
            ThrowIfSessionLost("set the state of", ex);
            throw;
        }
    }

    private void ThrowIfSessionLost(string operation, Exception? inner)
    {
        if (IsSessionLost)
        {
            throw new ServiceBusException($"Cannot {operation} session '{SessionId}': its lock was lost (it expired, or its receive link closed); the broker will deliver the session's messages again.", ServiceBusFailureReason.SessionLockLost, Entity.Path, inner);
        }
    }

    /// <summary>Gets the entity's lock duration (the session lock's): read from the entity, or the option; <see langword="null"/> when neither was available.</summary>
    public TimeSpan? LockDuration { get; }

    /// <summary>Gets the exception that stopped the source (a missing entity, missing rights), or <see langword="null"/>.</summary>
    public Exception? Fault => _fault;

    /// <inheritdoc />
    /// <remarks><see cref="ServiceBusMessageSource.MessagingSystemName"/>.</remarks>
    string IMessageSource.MessagingSystem => ServiceBusMessageSource.MessagingSystemName;

    /// <inheritdoc />
    /// <remarks>The entity's path (<see cref="ServiceBusEntity.Path"/>).</remarks>
    string? IMessageSource.DestinationName => Entity.Path;

    /// <summary>Receives the session's next message (see <see cref="ReceiveBatchAsync"/>).</summary>
    /// <param name="cancellationToken">Cancels the wait for the previous message and the receive, including its wait for a message.</param>
    /// <returns>The next message, or <see langword="null"/>.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        var batch = await ReceiveBatchAsync(1, cancellationToken).ConfigureAwait(true);
        return batch.Count > 0 ? batch[0] : null;
    }

    /// <summary>
    /// Receives the session's next message: waits (up to <see cref="ServiceBusSourceOptions.MaxWaitTime"/>) until the
    /// previous one is settled or lost, renews the session lock when half of it or less is left, then receives one
    /// message. At most one message, whatever <paramref name="maxMessages"/> allows: that is what keeps a session in order.
    /// </summary>
    /// <param name="maxMessages">The most messages the caller takes; at least 1 (one is returned at most).</param>
    /// <param name="cancellationToken">
    /// Cancels the wait for the previous message and the receive, including its wait for a message (as the SDK's session
    /// processor cancels its receive when it stops; the SDK withdraws the link's credit, so a canceled call locks nothing).
    /// </param>
    /// <returns>The next message, or none: the previous one is still out, the session is empty for now, or the session is lost.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxMessages"/> is zero or negative.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    public Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
        return ReceiveNextAsync(_options.MaxWaitTime, cancellationToken);
    }

    /// <summary>Stops renewing the session lock, and closes the session receiver (releasing the session) when the source accepted it through <see cref="ServiceBusTransport"/>.</summary>
    /// <returns>A task that completes when the receiver is closed.</returns>
    public async ValueTask DisposeAsync()
    {
        await _lock.StopKeeperAsync().ConfigureAwait(true);
        _lock.Dispose();
        if (_ownKeeper is { } keeper)
        {
            await keeper.DisposeAsync().ConfigureAwait(true);
        }

        if (_ownsReceiver)
        {
            await _receiver.DisposeAsync().ConfigureAwait(true);
        }
    }

    /// <inheritdoc />
    public override string ToString() => $"ServiceBusSessionMessageSource of {_lock}";

    /// <summary>Whether a message of the session is out (handed over and not yet settled or lost).</summary>
    internal bool HasMessageOut => _lock.HasCurrent;

    /// <summary>The session's lock (the multi-session source listens to it).</summary>
    internal SessionLock Lock => _lock;

    /// <summary>
    /// Set by a session processor that closes the session itself, after its last handler ended (a handler still running
    /// when the processor stopped): the multi-session source then leaves the session held, and its receiver open.
    /// </summary>
    internal bool ClosedByOwner { get; set; }

    /// <summary>
    /// Keeps the session lock with <paramref name="keeper"/> in place of the source's timer (see the class remarks);
    /// false, the timer still renewing, when the keeper cannot take it (stopped, its scheduler shutting down).
    /// </summary>
    internal bool KeepLockWith(LeaseKeeper keeper)
    {
        try
        {
            _lock.KeepWith(keeper, this);
            return true;
        }
        catch (Exception ex) when (ex is InvalidOperationException or ObjectDisposedException)
        {
            return false;
        }
        catch (ArgumentException ex)
        {
            _lock.MarkLost(new LeaseLostException($"The lock of {_lock} expired at {_lock.LockedUntil:O} before it could be kept.", ex));
            return false;
        }
    }

    /// <summary>
    /// Called at the start of a receive, on the caller's thread: a receive from a pump runs in its scheduler, whose
    /// lease lane then keeps the session lock (a keeper of the source's own) unless a keeper keeps it already.
    /// </summary>
    private void KeepLockInCallersScheduler()
    {
        if (_ownKeeper is not null || _lock.IsKeptByLeaseKeeper || _lock.IsLost || PriorityScheduler.Current is not { } scheduler)
        {
            return;
        }

        try
        {
            _ownKeeper = new LeaseKeeper(scheduler, new LeaseKeeperOptions { Name = $"session-{SessionId}", TimeProvider = _options.TimeProvider });
        }
        catch (Exception ex) when (ex is InvalidOperationException or ObjectDisposedException)
        {
            return; // the scheduler is shutting down: the timer goes on renewing
        }

        KeepLockWith(_ownKeeper);
    }

    /// <summary>
    /// Opens the session receiver's management link with a renewal of the session lock, in the lease lane of the scheduler
    /// the first receive runs in (see <see cref="ManagementLink"/>); with a peek outside any scheduler, once it stops
    /// taking work, or once the session is lost.
    /// </summary>
    private Task OpenManagementLinkAsync()
    {
        if (PriorityScheduler.Current is { } scheduler && !_lock.IsLost)
        {
            try
            {
                return scheduler.GetLane(LanePriority.Lease).Run(() => _lock.RenewAsync(_lock.LockedUntil, CancellationToken.None));
            }
            catch (Exception ex) when (ex is InvalidOperationException or ObjectDisposedException)
            {
                // the scheduler stopped taking work: the peek opens the link
            }
        }

        return ManagementLink.PeekNothingAsync(_receiver);
    }

    /// <summary>
    /// Set when the last receive found the session busy in this process (the handler of an earlier acceptance's message
    /// still runs): the task that completes when it is free; <see langword="null"/> otherwise.
    /// </summary>
    internal Task? WaitingFor { get; private set; }

    /// <summary>The receive the multi-session source started on this session and has not collected yet.</summary>
    internal Task<IReadOnlyList<ILeasedMessage>>? PendingReceive { get; set; }

    /// <summary>
    /// Whether a message of this session from an earlier acceptance (its lock lost) still has a handler running in this
    /// process, after waiting up to <paramref name="maxWait"/> for it to end; sets <see cref="WaitingFor"/>.
    /// </summary>
    private async Task<bool> BusyInThisProcessAsync(TimeSpan maxWait, CancellationToken cancellationToken)
    {
        if (SessionHandlers.IsBusy(_lock.Namespace, Entity, SessionId, out var busy) && maxWait > TimeSpan.Zero)
        {
            await busy.WaitAsync(maxWait, _clock, cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
            cancellationToken.ThrowIfCancellationRequested();
        }

        WaitingFor = SessionHandlers.IsBusy(_lock.Namespace, Entity, SessionId, out busy) ? busy : null;
        return WaitingFor is not null;
    }

    /// <summary>
    /// The session's next message, waiting up to <paramref name="waitForPrevious"/> for the previous one to be settled
    /// (zero: do not wait), then up to <paramref name="receiveWait"/> (by default <see cref="ServiceBusSourceOptions.MaxWaitTime"/>) for a message.
    /// </summary>
    internal async Task<IReadOnlyList<ILeasedMessage>> ReceiveNextAsync(TimeSpan waitForPrevious, CancellationToken cancellationToken, TimeSpan? receiveWait = null)
    {
        KeepLockInCallersScheduler();
        var fault = _fault;
        if (fault is not null)
        {
            throw new InvalidOperationException($"{this} has stopped: {fault.Message}", fault);
        }

        if (_lock.IsLost || !await _lock.WaitUntilIdleAsync(waitForPrevious, _clock, cancellationToken).ConfigureAwait(true) || _lock.IsLost)
        {
            return [];
        }

        cancellationToken.ThrowIfCancellationRequested();
        if (await BusyInThisProcessAsync(waitForPrevious, cancellationToken).ConfigureAwait(true))
        {
            return [];
        }

        IReadOnlyList<ServiceBusReceivedMessage>? received;
        var managementLinkOpened = _managementLink.OpenAsync(); // alongside the first receive; see ManagementLink
        try
        {
            received = await _receiver.ReceiveMessagesAsync(1, receiveWait ?? _options.MaxWaitTime, cancellationToken).ConfigureAwait(true);
        }
        catch (Exception ex) when (ServiceBusErrors.TranslateReceive(ex, Entity, sessions: true, cancellationToken) is { } translated)
        {
            switch (translated)
            {
                case LeaseLostException:
                    _lock.MarkLost(translated);
                    return [];
                case InvalidOperationException:
                    _fault = translated;
                    break;
            }

#pragma warning disable MA0027 // not a rethrow: the mapped exception carries ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }

        if (received is null || received.Count == 0)
        {
            return [];
        }

        await managementLinkOpened.ConfigureAwait(true);
        if (!_lock.ConfirmHeld(_clock.GetUtcNow()))
        {
            // The lock ran out while the message came, by the judgement of the session's renewer (its keeper's verdict):
            // the broker may already hand the session to another receiver, so this delivery never reaches a handler
            // (it comes back with the session).
            _lock.MarkLost(new LeaseLostException($"The lock of {_lock} expired at {_lock.HeldUntil:O}, before its message {received[0].MessageId} was handed out."));
            return [];
        }

        var message = new ServiceBusLeasedMessage(_receiver, received[0], Entity, _lock);
        _lock.SetCurrent(message);
        return [message];
    }

}
