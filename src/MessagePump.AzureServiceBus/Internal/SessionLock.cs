using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Internal;

/// <summary>
/// The lock of one accepted session, shared by its messages: renewing any of them renews it, and losing it loses every
/// one of them. Also the session's order gate: one message is out at a time, and the next is received only once it
/// is settled or lost.
/// </summary>
internal sealed class SessionLock
{
    private readonly ServiceBusSessionReceiver _receiver;
    private readonly Lock _gate = new();
    private long _lockedUntilTicks;
    private ServiceBusLeasedMessage? _current;
    private TaskCompletionSource? _currentDone;
    private Exception? _lost;

    public SessionLock(ServiceBusSessionReceiver receiver, ServiceBusEntity entity)
    {
        _receiver = receiver;
        Entity = entity;
        Volatile.Write(ref _lockedUntilTicks, receiver.SessionLockedUntil.UtcTicks);
    }

    public ServiceBusEntity Entity { get; }

    public string SessionId => _receiver.SessionId;

    public DateTimeOffset LockedUntil => new(Volatile.Read(ref _lockedUntilTicks), TimeSpan.Zero);

    public bool IsLost => Volatile.Read(ref _lost) is not null;

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

    /// <summary>Renews the session lock; a lost session lock marks the session lost and throws <see cref="LeaseLostException"/>.</summary>
    public async Task<DateTimeOffset> RenewAsync(CancellationToken cancellationToken)
    {
        ThrowIfLost(null);
        try
        {
            await _receiver.RenewSessionLockAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ServiceBusErrors.Translate(ex, $"Renewing the lock of {this}", cancellationToken) is { } translated)
        {
            if (translated is LeaseLostException)
            {
                MarkLost(translated);
            }

#pragma warning disable MA0027 // not a rethrow: the mapped exception carries ex as its inner exception
            throw translated;
#pragma warning restore MA0027
        }

        var lockedUntil = _receiver.SessionLockedUntil;
        Volatile.Write(ref _lockedUntilTicks, lockedUntil.UtcTicks);
        return lockedUntil;
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

    /// <summary>Marks the session lost: every later operation on it throws, and the order gate opens.</summary>
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

        done?.TrySetResult();
    }

    /// <summary>Records <paramref name="message"/> as the one message of the session that is out.</summary>
    public void SetCurrent(ServiceBusLeasedMessage message)
    {
        lock (_gate)
        {
            _current = message;
            _currentDone = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        }
    }

    /// <summary>Opens the order gate when <paramref name="message"/> was the one out.</summary>
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

        done?.TrySetResult();
    }

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
            await done.WaitAsync(maxWait, clock, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (TimeoutException)
        {
            return false;
        }
    }

    public override string ToString() => $"session '{SessionId}' of the {Entity}";
}
