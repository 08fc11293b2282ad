using PriorityAsync.MessagePump.AzureServiceBus.Internal;

namespace PriorityAsync.MessagePump.AzureServiceBus;

/// <summary>
/// An <see cref="IMessageSource"/> over up to <see cref="MaxConcurrentSessions"/> sessions of a session-enabled queue or
/// subscription at once, each accepted with its own session receiver (a <see cref="ServiceBusSessionMessageSource"/>):
/// a receive takes the next message of every session that has none out, so sessions run side by side while each
/// stays in order. A session that has nothing more for now, or whose lock was lost, is closed (releasing it to other
/// consumers), and the next session with messages is accepted in its place. Every held session's lock is kept from its
/// accept to its close, whether or not a message of it is out, by one <see cref="LeaseKeeper"/> in the lease lane of the
/// scheduler whose pump receives from the source (see <see cref="ServiceBusSessionMessageSource"/>), and a session is never in two handlers of this process at once (see
/// <see cref="ServiceBusSessionMessageSource"/>).
/// </summary>
/// <remarks>Open it with <see cref="ServiceBusTransport.OpenSessionsAsync"/>. Receives are serialized.</remarks>
public sealed class ServiceBusMultiSessionSource : IMessageSource, IAsyncDisposable
{
    private readonly ServiceBusTransport _transport;
    private readonly ServiceBusSourceOptions _options;
    private readonly List<ServiceBusSessionMessageSource> _sessions = [];
    private readonly SemaphoreSlim _receiving = new(1, 1);
    private readonly TimeProvider _clock;
    private readonly CancellationTokenSource _disposing = new(); // ends the accept and the sessions' receives under way at dispose
    private TaskCompletionSource _wake = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly List<Task> _closing = [];
    private Task<ServiceBusSessionMessageSource?>? _accepting;
    private PriorityScheduler? _callersScheduler; // the scheduler of the first receive's caller (the pump's)
    private LeaseKeeper? _ownKeeper;
    private int _next;
    private int _nextSessionId;
    private long _sessionsLost;
    private bool _disposed;

    internal ServiceBusMultiSessionSource(ServiceBusTransport transport, ServiceBusEntity entity, int maxConcurrentSessions, TimeSpan? lockDuration, ServiceBusSourceOptions options)
    {
        _transport = transport;
        _options = options;
        _clock = options.TimeProvider ?? TimeProvider.System;
        Entity = entity;
        MaxConcurrentSessions = maxConcurrentSessions;
        LockDuration = lockDuration;
    }

    /// <summary>Gets the entity the sessions belong to.</summary>
    public ServiceBusEntity Entity { get; }

    /// <summary>Gets the most sessions held at once.</summary>
    public int MaxConcurrentSessions { get; }

    /// <summary>Gets the entity's lock duration (the session lock's): read from the entity, or the option; <see langword="null"/> when neither was available.</summary>
    public TimeSpan? LockDuration { get; }

    /// <summary>
    /// The only sessions to accept (<see cref="ServiceBusPumpSessionProcessorOptions.SessionIds"/>), each by its id in
    /// turn; <see langword="null"/> or empty: the next session with messages. Set before the first receive.
    /// </summary>
    internal IReadOnlyList<string>? SessionIds { get; set; }

    /// <summary>
    /// How long a held session's receive waits for its next message before the session is closed
    /// (<see cref="ServiceBusPumpSessionProcessorOptions.SessionIdleTimeout"/>); <see langword="null"/>:
    /// <see cref="ServiceBusSourceOptions.MaxWaitTime"/>. Set before the first receive.
    /// </summary>
    internal TimeSpan? SessionIdleTimeout { get; set; }

    /// <summary>
    /// Awaited for each accepted session before it is received from (its first message comes after it); a session
    /// whose call throws is closed without <see cref="SessionClosing"/>. Set before the first receive.
    /// </summary>
    internal Func<ServiceBusSessionMessageSource, Task>? SessionOpening { get; set; }

    /// <summary>
    /// Awaited for each session that was opened, once, before its receiver closes (the session still held, its state
    /// readable); with it set, sessions are closed beside the receives, so a call that waits for a handler holds up no
    /// other session. Set before the first receive.
    /// </summary>
    internal Func<ServiceBusSessionMessageSource, Task>? SessionClosing { get; set; }

    /// <summary>
    /// The keeper that keeps every accepted session's lock (a session processor's, in its pump's scheduler; it outlives
    /// the source); <see langword="null"/>: a keeper of the source's own, in the scheduler of the first receive's caller.
    /// Set before the first receive.
    /// </summary>
    internal LeaseKeeper? SessionKeeper { get; set; }

    /// <summary>Gets how many held sessions were dropped because their lock was lost or expired (each is accepted again later, by this or another consumer).</summary>
    internal long SessionsLost => Interlocked.Read(ref _sessionsLost);

    /// <summary>Gets the identifiers of the sessions held now.</summary>
    public IReadOnlyList<string> ActiveSessions
    {
        get
        {
            lock (_sessions)
            {
                return [.. _sessions.Select(s => s.SessionId)];
            }
        }
    }

    /// <inheritdoc />
    /// <remarks><see cref="ServiceBusMessageSource.MessagingSystemName"/>.</remarks>
    string IMessageSource.MessagingSystem => ServiceBusMessageSource.MessagingSystemName;

    /// <inheritdoc />
    /// <remarks>The entity's path (<see cref="ServiceBusEntity.Path"/>).</remarks>
    string? IMessageSource.DestinationName => Entity.Path;

    /// <summary>Receives the next message of one session (see <see cref="ReceiveBatchAsync"/>).</summary>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>A message, or <see langword="null"/>.</returns>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    public async Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default)
    {
        var batch = await ReceiveBatchAsync(1, cancellationToken).ConfigureAwait(false);
        return batch.Count > 0 ? batch[0] : null;
    }

    /// <summary>
    /// Receives the next message of each held session that has none out, up to <paramref name="maxMessages"/>: the
    /// receives of all those sessions run at once, and the call returns as soon as one of them brings a message (a
    /// receive still waiting is collected by a later call). While fewer than <see cref="MaxConcurrentSessions"/> sessions
    /// are held it accepts the next session that has messages, beside the receives. With nothing to return it waits
    /// up to <see cref="ServiceBusSourceOptions.MaxWaitTime"/>, and takes a message of a session whose previous one was
    /// settled meanwhile. A session that had nothing more is closed; a session whose lock was lost is dropped
    /// (<see cref="SessionsLost"/>); a session whose earlier acceptance's handler still runs in this process waits.
    /// </summary>
    /// <param name="maxMessages">The most messages to return; at least 1.</param>
    /// <param name="cancellationToken">Cancels the receive.</param>
    /// <returns>At most one message per session; none when no session had one.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="maxMessages"/> is zero or negative.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was canceled.</exception>
    /// <exception cref="TransientTransportException">The broker failed in a way worth retrying.</exception>
    public async Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
        _callersScheduler ??= PriorityScheduler.Current; // before the first await: a pump's receive runs in its scheduler
        await _receiving.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            var deadline = _clock.GetUtcNow() + _options.MaxWaitTime;
            var received = new List<ILeasedMessage>();
            Exception? failure = null;
            while (true)
            {
                var wake = ArmWakeAsync();
                StartAccept();
                var (waitOn, failed) = await CollectAsync(received, maxMessages).ConfigureAwait(false);
                failure ??= failed;
                if (received.Count > 0)
                {
                    return received;
                }

                // A held session whose message is out (its handler runs, or its complete is being answered) is waited
                // for, not given up on: returning empty here would send the pump into its empty-receive delay while
                // that message settles, once per message (the session throughput's cost); the wake ends the wait.
                var left = deadline - _clock.GetUtcNow();
                if (left <= TimeSpan.Zero || waitOn.Count == 0 && _accepting is null && !AnyMessageOut())
                {
                    return failure is null ? received : throw failure;
                }

                if (_accepting is { } accepting)
                {
                    waitOn.Add(accepting);
                }

                waitOn.Add(wake);
                using var bounded = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
                waitOn.Add(Task.Delay(left, _clock, bounded.Token));
                await Task.WhenAny(waitOn).ConfigureAwait(false);
                await bounded.CancelAsync().ConfigureAwait(false);
                cancellationToken.ThrowIfCancellationRequested();
            }
        }
        finally
        {
            _receiving.Release();
        }
    }

    /// <summary>Closes every held session.</summary>
    /// <returns>A task that completes when they are closed.</returns>
    public async ValueTask DisposeAsync()
    {
        // As the SDK's session processor does at its stop: the accept and the receives under way end now, not when
        // their waits (MaxWaitTime, the session idle timeout) run out, so that an idle processor stops at once.
        await _disposing.CancelAsync().ConfigureAwait(false);
        await _receiving.WaitAsync().ConfigureAwait(false);
        ServiceBusSessionMessageSource[] held;
        lock (_sessions)
        {
            _disposed = true;
            held = [.. _sessions];
            _sessions.Clear();
        }

        foreach (var session in held)
        {
            await CloseAsync(session).ConfigureAwait(false);
        }

        Task[] closing;
        lock (_closing)
        {
            closing = [.. _closing];
        }

        await Task.WhenAll(closing).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);

        if (_accepting is { } accepting)
        {
            _accepting = null;
            await ((Task)accepting).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (accepting.IsCompletedSuccessfully && accepting.Result is { } late)
            {
                await CloseAsync(late).ConfigureAwait(false);
            }
        }

        if (_ownKeeper is { } keeper)
        {
            await keeper.DisposeAsync().ConfigureAwait(false);
        }

        _receiving.Release();
    }

    /// <inheritdoc />
    public override string ToString() => $"ServiceBusMultiSessionSource of the {Entity} (up to {MaxConcurrentSessions} sessions)";

    private int Count()
    {
        lock (_sessions)
        {
            return _sessions.Count;
        }
    }

    /// <summary>Whether a held session has a message out whose settlement will wake this source.</summary>
    private bool AnyMessageOut()
    {
        lock (_sessions)
        {
            return _sessions.Exists(s => s.HasMessageOut && !s.IsSessionLost);
        }
    }

    /// <summary>A task that completes when a held session's message out is settled or lost (armed before looking at the sessions, so no wake is missed).</summary>
    private Task ArmWakeAsync()
    {
        lock (_sessions)
        {
            if (_wake.Task.IsCompleted)
            {
                _wake = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }

#pragma warning disable VSTHRD003 // the source's own TaskCompletionSource (RunContinuationsAsynchronously), completed by Wake
            return _wake.Task;
#pragma warning restore VSTHRD003
        }
    }

    private void Wake()
    {
        TaskCompletionSource wake;
        lock (_sessions)
        {
            wake = _wake;
        }

        wake.TrySetResult();
    }

    /// <summary>Starts accepting the next session when fewer than <see cref="MaxConcurrentSessions"/> are held and no accept is under way.</summary>
    private void StartAccept()
    {
        if (_accepting is null && Count() < MaxConcurrentSessions && !EverySessionIdHeld())
        {
            _accepting = AcceptNextAsync();
        }
    }

    /// <summary>
    /// Takes what the held sessions have: the answers of finished receives (a message each, or nothing: the session is
    /// closed), a finished accept (the session joins), and starts a receive on each session that has no message out.
    /// Returns the receives and waits still open.
    /// </summary>
    private async Task<(List<Task> Open, Exception? Failure)> CollectAsync(List<ILeasedMessage> received, int maxMessages)
    {
        var failure = AdoptAccepted();
        ServiceBusSessionMessageSource[] held;
        lock (_sessions)
        {
            held = [.. _sessions];
        }

        var open = new List<Task>();
        var retired = new List<ServiceBusSessionMessageSource>();
        var now = _clock.GetUtcNow();
        for (var i = 0; i < held.Length; i++)
        {
            var session = held[(_next + i) % held.Length];
            if (session.PendingReceive is null && !session.HasMessageOut && !session.IsSessionLost && !session.Lock.ReleaseRequested && received.Count < maxMessages)
            {
                session.PendingReceive = session.ReceiveNextAsync(TimeSpan.Zero, _disposing.Token, SessionIdleTimeout);
            }

            if (session.PendingReceive is { } pending)
            {
                if (!pending.IsCompleted || received.Count >= maxMessages)
                {
                    open.Add(pending);
                    continue;
                }

                session.PendingReceive = null;
                if (!TakeAnswer(session, pending, received, now))
                {
                    failure ??= pending.Exception?.InnerException;
                    retired.Add(session); // a receive that failed: release the session, another acceptor takes it
                    continue;
                }
            }

            if (session.IsSessionLost)
            {
                Interlocked.Increment(ref _sessionsLost);
                retired.Add(session);
            }
            else if (session.WaitingFor is { } busy)
            {
                open.Add(busy); // held, waiting for this process's handler of its earlier acceptance
            }
            else if (!session.HasMessageOut && session.PendingReceive is null)
            {
                retired.Add(session); // nothing more for now: release it so another consumer, or a later accept, takes it
            }
        }

        _next = held.Length == 0 ? 0 : (_next + 1) % held.Length;
        await RetireAsync(retired).ConfigureAwait(false);
        return (open, failure);
    }

    /// <summary>Adds a session whose accept has finished to the held ones; returns the accept's failure, if it failed.</summary>
    private Exception? AdoptAccepted()
    {
        if (_accepting is not { IsCompleted: true } accepted)
        {
            return null;
        }

        _accepting = null;
        if (!accepted.IsCompletedSuccessfully)
        {
            return accepted.Exception?.InnerException;
        }

#pragma warning disable VSTHRD002 // the accept has completed (IsCompletedSuccessfully): nothing waits
        if (accepted.Result is { } session)
#pragma warning restore VSTHRD002
        {
            session.Lock.Idle = Wake;
            lock (_sessions)
            {
                _sessions.Add(session);
            }
        }

        return null;
    }

    private async Task RetireAsync(List<ServiceBusSessionMessageSource> retired)
    {
        foreach (var session in retired)
        {
            lock (_sessions)
            {
                _sessions.Remove(session);
            }

            if (SessionClosing is null)
            {
                await CloseAsync(session).ConfigureAwait(false);
                continue;
            }

            // Beside the receives: the closing call may wait for the session's last handler.
            var closing = CloseAsync(session);
            lock (_closing)
            {
                _closing.RemoveAll(t => t.IsCompleted);
                _closing.Add(closing);
            }
        }
    }

    /// <summary>
    /// Adds the message of a finished receive to <paramref name="received"/>, unless the session lock ran out while it
    /// waited here (then the session is lost, and the message comes back with it, in order); false when the receive failed.
    /// </summary>
    private static bool TakeAnswer(ServiceBusSessionMessageSource session, Task<IReadOnlyList<ILeasedMessage>> answer, List<ILeasedMessage> received, DateTimeOffset now)
    {
        if (!answer.IsCompletedSuccessfully)
        {
            return false;
        }

#pragma warning disable VSTHRD002 // the receive has completed (IsCompletedSuccessfully): nothing waits
        foreach (var message in answer.Result)
#pragma warning restore VSTHRD002
        {
            if (!session.Lock.ConfirmHeld(now))
            {
                session.Lock.MarkLost(new LeaseLostException($"The lock of {session.Lock} expired at {session.Lock.HeldUntil:O}, before its message {message.MessageId} was handed out."));
                NoHandlerWillRun(session, message);
            }
            else
            {
                received.Add(message);
            }
        }

        return true;
    }

    /// <summary>
    /// Closes a session: its keeper stops and its receiver closes, which releases the session at the broker (its
    /// messages, locked with the session, come back to it). A receive still pending on it is waited for up to the
    /// source's receive wait, not longer: on a closed receiver the 7.21 client can hold it until its operation timeout
    /// (60 s by default: a host's disposal waited that long for one session), and whatever it may still bring belongs to
    /// the released session. Its outcome is observed when it ends.
    /// </summary>
    private async Task CloseAsync(ServiceBusSessionMessageSource session)
    {
        session.Lock.Idle = null;
        if (SessionClosing is { } closing)
        {
            await closing(session).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }

        if (session.ClosedByOwner)
        {
            return; // the session processor closes it once its last handler has ended
        }

        await session.DisposeAsync().ConfigureAwait(false);
        if (session.PendingReceive is { } pending)
        {
            session.PendingReceive = null;
            await ((Task)pending).WaitAsync(_options.MaxWaitTime, _clock).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);

            // Whatever it brought, now or later, belongs to the released session: no handler of this source will run
            // it, so it must not keep the session busy in this process (a later acceptance would wait for ever).
            _ = pending.ContinueWith(
                static (answer, state) =>
                {
                    if (!answer.IsCompletedSuccessfully)
                    {
                        _ = answer.Exception;
                        return;
                    }

#pragma warning disable VSTHRD002 // the receive has completed (IsCompletedSuccessfully): nothing waits
                    foreach (var message in answer.Result)
#pragma warning restore VSTHRD002
                    {
                        NoHandlerWillRun((ServiceBusSessionMessageSource)state!, message);
                    }
                },
                session,
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default);
        }
    }

    /// <summary>
    /// A message received for <paramref name="session"/> that no handler will run (its session was closed or lost
    /// before it was handed out): it no longer occupies the session in this process (SessionHandlers), so a later
    /// acceptance of the session, here or by another source, is not held back by it. The broker gives it back with
    /// the session.
    /// </summary>
    private static void NoHandlerWillRun(ServiceBusSessionMessageSource session, ILeasedMessage message)
    {
        if (message is ServiceBusLeasedMessage leased)
        {
            session.Lock.Ended(leased);
        }
    }

    private async Task<ServiceBusSessionMessageSource?> AcceptNextAsync()
    {
        var sessionId = NextSessionId();
        if (sessionId is null && SessionIds is { Count: > 0 })
        {
            return null; // every session named is held (checked before the accept began; one accept at a time)
        }

        // Not bounded by the receive's wait: the accept runs beside the receives (its task is kept across them) until
        // the broker hands over a session or the client's own operation timeout ends the wait, and only disposal
        // cancels it. An accept canceled at a fixed bound never completes when its answers wait longer than that for a
        // thread (a starved pool), and a canceled accept can leave a session locked to a link nobody reads.
        ServiceBusSessionMessageSource session;
        try
        {
            session = await _transport.AcceptCoreAsync(Entity, sessionId, LockDuration, _options, _disposing.Token).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is OperationCanceledException || (ex is TransientTransportException && ServiceBusErrors.IsNoSessionAvailable(ex.InnerException)))
        {
            return null; // no session has messages now
        }
        catch (TransientTransportException) when (sessionId is not null)
        {
            // The session asked for is held by another receiver (or was just released by this one): the next id's turn.
            await Task.Delay(_options.MaxWaitTime, _clock, _disposing.Token).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            return null;
        }

        // Kept from now: the opening call may outlast the lock.
        if (Keeper() is { } keeper)
        {
            session.KeepLockWith(keeper);
        }

        if (SessionOpening is { } opening)
        {
            try
            {
                await opening(session).ConfigureAwait(false);
            }
            catch (Exception)
            {
                // Reported by the caller's hook; the session is released without having been opened.
                await session.DisposeAsync().ConfigureAwait(false);
                return null;
            }
        }

        return session;
    }

    /// <summary>The keeper of the sessions' locks: <see cref="SessionKeeper"/>, or the source's own in the first caller's scheduler; null outside any scheduler.</summary>
    private LeaseKeeper? Keeper()
    {
        if (SessionKeeper is { } shared)
        {
            return shared;
        }

        if (_ownKeeper is null && _callersScheduler is { } scheduler)
        {
            try
            {
                _ownKeeper = new LeaseKeeper(scheduler, new LeaseKeeperOptions { Name = $"sessions-{Entity.Path}", TimeProvider = _options.TimeProvider });
            }
            catch (Exception ex) when (ex is InvalidOperationException or ObjectDisposedException)
            {
                return null; // the scheduler is shutting down: each session's timer renews it
            }
        }

        return _ownKeeper;
    }

    /// <summary>Whether there is a <see cref="SessionIds"/> filter and every session it names is held (nothing more to accept).</summary>
    private bool EverySessionIdHeld()
    {
        if (SessionIds is not { Count: > 0 } ids)
        {
            return false;
        }

        var held = ActiveSessions;
        return ids.All(id => held.Contains(id, StringComparer.Ordinal));
    }

    /// <summary>The next of <see cref="SessionIds"/> that is not held, in turn; <see langword="null"/> without a filter (the next session with messages).</summary>
    private string? NextSessionId()
    {
        if (SessionIds is not { Count: > 0 } ids)
        {
            return null;
        }

        var held = ActiveSessions;
        for (var i = 0; i < ids.Count; i++)
        {
            var id = ids[(_nextSessionId + i) % ids.Count];
            if (!held.Contains(id, StringComparer.Ordinal))
            {
                _nextSessionId = (_nextSessionId + i + 1) % ids.Count;
                return id;
            }
        }

        return null;
    }
}
