using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>A client's receive link on an entity: credit in, deliveries out (the delivery tag is the lock token), dispositions in.</summary>
internal sealed class ConsumerLink : IConsumer
{
    /// <summary>The description of a session-lock-lost error (a detach or a settlement's outcome).</summary>
    public const string SessionLockLostDescription = "The session lock has expired or the session was released.";
    private const string LockLostDescription = "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.";
    private readonly ServiceBusTestBroker _broker;
    private readonly SendingAmqpLink _link;
    private readonly TaskCompletionSource _detached = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private volatile bool _closed;
    private int _credit;

    public ConsumerLink(ServiceBusTestBroker broker, SendingAmqpLink link, ServiceBusTestQueue queue)
    {
        _broker = broker;
        _link = link;
        Queue = queue;
        ReceiveAndDelete = link.Settings.SettleType == SettleMode.SettleOnSend;
        link.SafeAddClosed((_, _) => OnClosed());
    }

    public ServiceBusTestQueue Queue { get; }

    public string? SessionId { get; set; }

    public bool ReceiveAndDelete { get; }

    public string? LinkName => _link.Name;

    /// <summary>Gets the connection the link is on.</summary>
    public AmqpConnection Connection => _link.Session.Connection;

    /// <summary>
    /// The credit the broker may use: what the client granted, never more than the link has left (the client may take
    /// credit back with a flow that is not a drain).
    /// </summary>
    public int Credit
    {
        get => (int)Math.Min(_credit, _link.LinkCredit);
        set => _credit = Math.Max(0, value);
    }

    public bool IsClosed => _closed;

    /// <summary>Gets a task that completes when the link is closed: after a detach the broker sent, once the client answered it (or the link was aborted).</summary>
#pragma warning disable VSTHRD003 // The link owns this task; a fault's caller waits for it by design.
    public Task Detached => _detached.Task;
#pragma warning restore VSTHRD003

    public void Start()
    {
        _link.RegisterCreditListener(OnCredit);
        _link.RegisterDispositionListener(OnDisposition);
        _broker.Operate(_ =>
        {
            if (!_closed)
            {
                Queue.AddConsumerLocked(this);
            }

            return 0;
        });
    }

    /// <summary>Detaches the link with an error; from now on nothing more is delivered on it.</summary>
    public void Close(AmqpSymbol condition, string description)
    {
        _closed = true;
        _link.SafeClose(new AmqpException(new Error { Condition = condition, Description = description }));
    }

    /// <summary>
    /// The session this link held was lost (its lock expired or was lost on demand, so another receiver may take it).
    /// As Service Bus does, the link is detached now with <c>com.microsoft:session-lock-lost</c>, whether or not a
    /// receive is waiting: the client learns of the loss before its next operation, which then fails instead of
    /// working on a session it no longer holds.
    /// </summary>
    public void OnSessionLost() => Close(ServiceBusSymbols.SessionLockLost, SessionLockLostDescription);

    public void Send(PendingDelivery delivery)
    {
        try
        {
            if (_closed || _link.State != AmqpObjectState.Opened)
            {
                throw new InvalidOperationException("The link is closing or closed: the delivery goes back to the queue.");
            }

            var message = AmqpCodec.BuildDelivery(delivery);
            _link.SendMessageNoWait(message, new ArraySegment<byte>(delivery.LockToken.ToByteArray()), AmqpConstants.NullBinary);
        }
        catch (Exception exception) when (exception is AmqpException or InvalidOperationException or ObjectDisposedException)
        {
            _broker.Operate(_ =>
            {
                delivery.Queue.UndoDeliveryLocked(delivery);
                return 0;
            });
        }
    }

    private static Settlement Classify(DeliveryState? state)
    {
        switch (state)
        {
            case Accepted:
                return new Settlement(SettleKind.Complete, null, null, []);
            case Rejected rejected:
                string? reason = null;
                var description = rejected.Error?.Description;
                var properties = new List<KeyValuePair<string, object>>();
                foreach (var (key, value) in rejected.Error?.Info ?? [])
                {
                    // As Service Bus: only a string reason or description is one; any other value stays an
                    // application property of that name, and the reason (or description) is left unset.
                    var name = key.Key.ToString();
                    if (value is string reasonText && string.Equals(name, AmqpCodec.DeadLetterReasonProperty, StringComparison.Ordinal))
                    {
                        reason = reasonText;
                    }
                    else if (value is string descriptionText && string.Equals(name, AmqpCodec.DeadLetterDescriptionProperty, StringComparison.Ordinal))
                    {
                        description = descriptionText;
                    }
                    else if (name is not null && value is not null)
                    {
                        properties.Add(new(name, value));
                    }
                }

                // As Service Bus: a dead-letter without a reason leaves DeadLetterReason unset (the condition is not a reason).
                return new Settlement(SettleKind.DeadLetter, reason, description, properties);
            case Modified modified:
                var modifiedProperties = (modified.MessageAnnotations ?? [])
                    .Where(pair => pair.Key.Key is not null && pair.Value is not null)
                    .Select(pair => new KeyValuePair<string, object>(pair.Key.Key.ToString()!, pair.Value))
                    .ToList();
                return new Settlement(modified.UndeliverableHere == true ? SettleKind.Defer : SettleKind.Abandon, null, null, modifiedProperties);
            case Released:
                // The 7.x client releases a message that arrives while no receive call waits (prefetch 0).
                return new Settlement(SettleKind.Release, null, null, []);
            default:
                return new Settlement(SettleKind.Abandon, null, null, []);
        }
    }

    private static Outcome OutcomeFor(SettleResult result, SettleKind kind) => result switch
    {
        SettleResult.Done => kind switch
        {
            SettleKind.Complete => AmqpConstants.AcceptedOutcome,
            SettleKind.DeadLetter => new Rejected(),
            _ => new Modified(),
        },
        SettleResult.SessionLockLost => new Rejected { Error = new Error { Condition = ServiceBusSymbols.SessionLockLost, Description = SessionLockLostDescription } },
        SettleResult.NotSupported => new Rejected { Error = new Error { Condition = ServiceBusSymbols.NotImplemented, Description = "The test broker does not support this settlement." } },
        _ => new Rejected { Error = new Error { Condition = ServiceBusSymbols.MessageLockLost, Description = LockLostDescription } },
    };

    private void OnCredit(uint credit, bool drain, ArraySegment<byte> txnId)
    {
        if (_closed)
        {
            return;
        }

        if (_broker.Faults.Take(ServiceBusTestOperations.Receive) is { } fault)
        {
            var (condition, description) = FaultErrors.For(fault, SessionId is not null);
            Close(condition, description);
            return;
        }

        _broker.Operate(
            _ =>
            {
                _credit = (int)Math.Min(int.MaxValue, (long)_credit + credit);
                return 0;
            },
            drain ? () => Credit = 0 : null);
    }

    private void OnDisposition(Delivery delivery)
    {
        Outcome outcome;
        var tag = delivery.DeliveryTag;
        var settlement = Classify(delivery.State);
        var kind = settlement.Kind;
        if (!delivery.Settled && _broker.Faults.Take(SettleOperations.Of(kind)) is { } fault)
        {
            // As the service answers a settlement it failed: the outcome carries the error, nothing is settled.
            outcome = FaultErrors.RejectedOutcome(fault, SessionId is not null);
        }
        else if (tag.Array is null || tag.Count != 16)
        {
            outcome = OutcomeFor(SettleResult.LockLost, kind);
        }
        else
        {
            var lockToken = new Guid(tag.AsSpan());
            var result = _broker.Operate(now => Queue.SettleLocked(this, lockToken, kind, settlement.Reason, settlement.Description, now, settlement.PropertiesToModify));
            outcome = OutcomeFor(result, kind);
        }

        if (delivery.Settled)
        {
            return;
        }

        var delay = _broker.Faults.SettlementAnswerDelay;
        if (delay <= TimeSpan.Zero)
        {
            _link.DisposeDelivery(delivery, true, outcome);
            return;
        }

        _ = AnswerLateAsync(delivery, outcome, delay);
    }

    /// <summary>Sends a settlement's answer after <paramref name="delay"/> on the broker's clock (<see cref="ServiceBusTestFaults.SettlementAnswerDelay"/>).</summary>
    private async Task AnswerLateAsync(Delivery delivery, Outcome outcome, TimeSpan delay)
    {
        await Task.Delay(delay, _broker.TimeProvider).ConfigureAwait(false);
        if (!_closed)
        {
            _link.DisposeDelivery(delivery, true, outcome);
        }
    }

    private void OnClosed()
    {
        _closed = true;
        _broker.Operate(now =>
        {
            Queue.ReleaseConsumerLocked(this, now);
            return 0;
        });
        _detached.TrySetResult();
    }
}
