namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>
/// Faults a <see cref="ServiceBusTestBroker"/> injects on demand: failed operations of any kind, late renewals and
/// settlement answers, detached links, dropped connections, lost session locks.
/// </summary>
public sealed class ServiceBusTestFaults
{
    /// <summary>Every defined operation bit.</summary>
    private const ServiceBusTestOperations AllOperations = ServiceBusTestOperations.Send | ServiceBusTestOperations.Receive
        | ServiceBusTestOperations.Settlements | ServiceBusTestOperations.Renewals | ServiceBusTestOperations.Management;

    /// <summary>The operations a <see cref="ServiceBusTestFault.LockLost"/> answer means something for: those of a held lock, and receives.</summary>
    private const ServiceBusTestOperations LockLostOperations = ServiceBusTestOperations.Receive | ServiceBusTestOperations.Renewals;

    private readonly ServiceBusTestBroker _broker;

    /// <summary>The armed faults, oldest first; an operation takes the oldest that names its kind.</summary>
    private readonly List<ArmedFault> _armed = [];
    private TimeSpan _renewLockDelay;
    private TimeSpan _settlementAnswerDelay;

    internal ServiceBusTestFaults(ServiceBusTestBroker broker) => _broker = broker;

    /// <summary>
    /// How late each renew-lock and renew-session-lock request is answered, measured on the broker's clock
    /// (<see cref="ServiceBusTestBroker.TimeProvider"/>); the lock is judged and renewed when the answer goes out.
    /// Zero (the default) answers at once.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public TimeSpan RenewLockDelay
    {
        get => ReadDelay(ref _renewLockDelay);
        set => WriteDelay(ref _renewLockDelay, value);
    }

    /// <summary>
    /// How late the answer to each settlement a receive link gets (complete, abandon, dead-letter, defer) goes out,
    /// measured on the broker's clock: the settlement is applied when it arrives (later renewals of the message are
    /// refused at once), only its answer waits, as when the way back to the client is slow. Zero (the default) answers at once.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public TimeSpan SettlementAnswerDelay
    {
        get => ReadDelay(ref _settlementAnswerDelay);
        set => WriteDelay(ref _settlementAnswerDelay, value);
    }

    /// <summary>
    /// The next <paramref name="count"/> operations of the kinds <paramref name="operations"/> names fail with
    /// <paramref name="fault"/>, answered as Service Bus answers that failure, and are not carried out: a faulted send
    /// enqueues nothing, a faulted settlement leaves the message locked, a faulted renewal does not renew. Faults armed
    /// by several calls are taken in the order they were armed, each by the first operation of a kind it names; an
    /// operation of another kind passes. <see cref="ServiceBusTestFault.ServerBusy"/> is status 503
    /// <c>com.microsoft:server-busy</c> (the client reports <c>ServiceBusFailureReason.ServiceBusy</c>) and
    /// <see cref="ServiceBusTestFault.Timeout"/> status 408 <c>com.microsoft:timeout</c> (<c>ServiceTimeout</c>), both
    /// transient: the client retries them as its retry options say (after a <c>ServiceBusy</c> its next call on that
    /// sender or receiver first waits about 10 s). A send or a settlement over the receive link is answered with a
    /// <c>rejected</c> outcome carrying the error; a <c>$management</c> request with the status code and
    /// <c>errorCondition</c>; a receive as <see cref="FailNextReceives"/> says. The answer to a settlement over the
    /// receive link settles the delivery, so the 7.21 client makes its retry over <c>$management</c>
    /// (<c>update-disposition</c>), which a session receiver's client does not: it reports <c>SessionLockLost</c>.
    /// </summary>
    /// <param name="operations">The kinds of operation that fail; one or more of <see cref="ServiceBusTestOperations"/>.</param>
    /// <param name="count">How many operations fail; at least 1.</param>
    /// <param name="fault">
    /// The answer. <see cref="ServiceBusTestFault.LockLost"/> only for <see cref="ServiceBusTestOperations.Receive"/> and
    /// the renewals, whose lock-ending answer <see cref="FailNextRenewals"/> describes.
    /// </param>
    /// <exception cref="ArgumentOutOfRangeException">
    /// <paramref name="operations"/> is <see cref="ServiceBusTestOperations.None"/> or has a bit that is not defined;
    /// <paramref name="count"/> is less than 1; <paramref name="fault"/> is not defined, or is
    /// <see cref="ServiceBusTestFault.LockLost"/> while <paramref name="operations"/> names a send, a settlement or another <c>$management</c> request.
    /// </exception>
    public void FailNext(ServiceBusTestOperations operations, int count, ServiceBusTestFault fault)
    {
        if (operations == ServiceBusTestOperations.None || (operations & ~AllOperations) != ServiceBusTestOperations.None)
        {
            throw new ArgumentOutOfRangeException(nameof(operations), operations, "Name one or more defined ServiceBusTestOperations.");
        }

        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        if (!Enum.IsDefined(fault))
        {
            throw new ArgumentOutOfRangeException(nameof(fault), fault, "Not a defined ServiceBusTestFault.");
        }

        if (fault == ServiceBusTestFault.LockLost && (operations & ~LockLostOperations) != ServiceBusTestOperations.None)
        {
            throw new ArgumentOutOfRangeException(nameof(fault), fault, "LockLost answers receives and lock renewals only; use ServerBusy or Timeout for the other operations.");
        }

        lock (_broker.Sync)
        {
            _armed.Add(new ArmedFault(operations, fault, count));
        }
    }

    /// <summary>
    /// The next <paramref name="count"/> renew-lock or renew-session-lock requests are answered with <paramref name="fault"/>
    /// (the lock is not renewed): <see cref="FailNext"/> with <see cref="ServiceBusTestOperations.Renewals"/>.
    /// <see cref="ServiceBusTestFault.LockLost"/> also ends the locks it names, as the service's 410 means: later renewals
    /// and settlements of them are answered lock-lost, and the messages (or the session) come back at once.
    /// </summary>
    /// <param name="count">How many requests fail; at least 1.</param>
    /// <param name="fault">The answer.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is less than 1, or <paramref name="fault"/> is not defined.</exception>
    public void FailNextRenewals(int count, ServiceBusTestFault fault) => FailNext(ServiceBusTestOperations.Renewals, count, fault);

    /// <summary>
    /// The next <paramref name="count"/> receive attempts fail with <paramref name="fault"/>'s error instead of delivering:
    /// <see cref="FailNext"/> with <see cref="ServiceBusTestOperations.Receive"/>.
    /// A receive link being attached is refused: the client's receive call fails with that reason (transient for
    /// <see cref="ServiceBusTestFault.ServerBusy"/> and <see cref="ServiceBusTestFault.Timeout"/>; the client retries as
    /// its retry options say). A receive link already attached is detached with the error when it next asks for
    /// messages: the 7.x client returns an empty result for that call and attaches a new link on the next one.
    /// </summary>
    /// <param name="count">How many receives fail; at least 1.</param>
    /// <param name="fault">The error.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is less than 1, or <paramref name="fault"/> is not defined.</exception>
    public void FailNextReceives(int count, ServiceBusTestFault fault) => FailNext(ServiceBusTestOperations.Receive, count, fault);

    /// <summary>
    /// Detaches receive links with an error (<c>amqp:link:detach-forced</c>), as the service does when it moves an entity;
    /// clients reattach. As on Service Bus, the locks taken over a detached link are lost: settling or renewing them
    /// (over a new link or the <c>$management</c> node) is answered <c>com.microsoft:message-lock-lost</c> (410), and the
    /// messages come back when their locks expire.
    /// </summary>
    /// <param name="entityPath">Only the receivers of this entity path; every receiver when null.</param>
    /// <returns>A task that completes when each client has answered its link's detach (or the link was aborted).</returns>
    public Task DetachReceiveLinksAsync(string? entityPath = null) => _broker.DetachConsumersAsync(entityPath);

    /// <summary>
    /// Drops every client connection at once, as when the network between the client and the service fails or the
    /// service's gateway restarts, while the broker keeps running and listening: each connection's socket is closed
    /// without an AMQP close, and with it every link it carried (send, receive, <c>$management</c>, <c>$cbs</c>). The
    /// client notices on its next operation (or a waiting one fails) and opens a new connection and new links, as it
    /// does with Service Bus. The locks taken over a dropped receive link are lost as after
    /// <see cref="DetachReceiveLinksAsync"/>: settling or renewing them is answered 410 <c>com.microsoft:message-lock-lost</c>,
    /// and the messages come back when their locks expire. A session a dropped receive link held is released at once
    /// (its locked messages come back now, another receiver may accept it), as when its receiver closes.
    /// </summary>
    /// <returns>A task that completes when every dropped connection and its links are closed on the broker's side.</returns>
    public Task DropConnectionsAsync() => _broker.DropConnectionsAsync();

    /// <summary>
    /// Loses the lock of a session a receiver holds, as the service does when the session's lock runs out or it moves
    /// the session: the session is released at once (its locked messages come back, another receiver may accept it)
    /// and the holder's receive link is detached with <c>com.microsoft:session-lock-lost</c>. The 7.21 client then
    /// reports its <c>ServiceBusSessionReceiver</c> closed (<c>IsClosed</c> is true) and refuses its next operations.
    /// </summary>
    /// <param name="entityPath">The session queue or subscription (<c>topic/Subscriptions/sub</c>).</param>
    /// <param name="sessionId">The session.</param>
    /// <returns>
    /// A task that completes when the client has answered the holder's detach (or the link was aborted): true, or false
    /// at once when no receiver held the session.
    /// </returns>
    /// <exception cref="ArgumentException"><paramref name="entityPath"/> is not a session entity of the broker, or an argument is null or white space.</exception>
    public Task<bool> LoseSessionLockAsync(string entityPath, string sessionId)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(entityPath);
        ArgumentException.ThrowIfNullOrWhiteSpace(sessionId);
        return _broker.LoseSessionLockAsync(entityPath, sessionId);
    }

    /// <summary>Takes the oldest armed fault that names <paramref name="operation"/> (one kind); null when none does.</summary>
    internal ServiceBusTestFault? Take(ServiceBusTestOperations operation)
    {
        lock (_broker.Sync)
        {
            for (var i = 0; i < _armed.Count; i++)
            {
                var armed = _armed[i];
                if ((armed.Operations & operation) != ServiceBusTestOperations.None)
                {
                    if (--armed.Remaining == 0)
                    {
                        _armed.RemoveAt(i);
                    }

                    return armed.Fault;
                }
            }

            return null;
        }
    }

    private TimeSpan ReadDelay(ref TimeSpan field)
    {
        lock (_broker.Sync)
        {
            return field;
        }
    }

    /// <summary>Sets one of the delays under the broker's lock; a negative value is refused, naming <paramref name="value"/>.</summary>
    private void WriteDelay(ref TimeSpan field, TimeSpan value)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(value, TimeSpan.Zero);
        lock (_broker.Sync)
        {
            field = value;
        }
    }

    /// <summary>A fault armed by one call: the operations it answers and how many of them it has left.</summary>
    private sealed class ArmedFault(ServiceBusTestOperations operations, ServiceBusTestFault fault, int remaining)
    {
        public ServiceBusTestOperations Operations { get; } = operations;

        public ServiceBusTestFault Fault { get; } = fault;

        public int Remaining { get; set; } = remaining;
    }
}
