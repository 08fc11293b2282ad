namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>Faults a <see cref="ServiceBusTestBroker"/> injects on demand: late or failed renewals, failed receives, detached links, lost session locks.</summary>
public sealed class ServiceBusTestFaults
{
    private readonly ServiceBusTestBroker _broker;
    private readonly Queue<ServiceBusTestFault> _renewalFaults = new();
    private readonly Queue<ServiceBusTestFault> _receiveFaults = new();
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
    /// The next <paramref name="count"/> renew-lock or renew-session-lock requests are answered with <paramref name="fault"/>
    /// (the lock is not renewed). <see cref="ServiceBusTestFault.LockLost"/> also ends the locks it names, as the service's
    /// 410 means: later renewals and settlements of them are answered lock-lost, and the messages (or the session) come
    /// back at once.
    /// </summary>
    /// <param name="count">How many requests fail; at least 1.</param>
    /// <param name="fault">The answer.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is less than 1, or <paramref name="fault"/> is not defined.</exception>
    public void FailNextRenewals(int count, ServiceBusTestFault fault) => Add(_renewalFaults, count, fault);

    /// <summary>
    /// The next <paramref name="count"/> receive attempts fail with <paramref name="fault"/>'s error instead of delivering.
    /// A receive link being attached is refused: the client's receive call fails with that reason (transient for
    /// <see cref="ServiceBusTestFault.ServerBusy"/> and <see cref="ServiceBusTestFault.Timeout"/>; the client retries as
    /// its retry options say). A receive link already attached is detached with the error when it next asks for
    /// messages: the 7.x client returns an empty result for that call and attaches a new link on the next one.
    /// </summary>
    /// <param name="count">How many receives fail; at least 1.</param>
    /// <param name="fault">The error.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="count"/> is less than 1, or <paramref name="fault"/> is not defined.</exception>
    public void FailNextReceives(int count, ServiceBusTestFault fault) => Add(_receiveFaults, count, fault);

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

    internal ServiceBusTestFault? TakeRenewalFault() => Take(_renewalFaults);

    internal ServiceBusTestFault? TakeReceiveFault() => Take(_receiveFaults);

    private void Add(Queue<ServiceBusTestFault> faults, int count, ServiceBusTestFault fault)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        if (!Enum.IsDefined(fault))
        {
            throw new ArgumentOutOfRangeException(nameof(fault), fault, "Not a defined ServiceBusTestFault.");
        }

        lock (_broker.Sync)
        {
            for (var i = 0; i < count; i++)
            {
                faults.Enqueue(fault);
            }
        }
    }

    private ServiceBusTestFault? Take(Queue<ServiceBusTestFault> faults)
    {
        lock (_broker.Sync)
        {
            return faults.TryDequeue(out var fault) ? fault : null;
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
}
