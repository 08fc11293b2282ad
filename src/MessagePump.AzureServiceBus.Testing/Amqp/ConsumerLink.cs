using Microsoft.Azure.Amqp;
using Microsoft.Azure.Amqp.Encoding;
using Microsoft.Azure.Amqp.Framing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>A client's receive link on an entity: credit in, deliveries out (the delivery tag is the lock token), dispositions in.</summary>
internal sealed class ConsumerLink : IConsumer
{
    private const string LockLostDescription = "The lock supplied is invalid. Either the lock expired, or the message has already been removed from the queue.";
    private readonly ServiceBusTestBroker _broker;
    private readonly SendingAmqpLink _link;
    private volatile bool _closed;

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

    public int Credit { get; set; }

    public bool IsClosed => _closed;

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

    private static (SettleKind Kind, string? Reason, string? Description) Classify(DeliveryState? state)
    {
        switch (state)
        {
            case Accepted:
                return (SettleKind.Complete, null, null);
            case Rejected rejected:
                var info = rejected.Error?.Info;
                string? reason = null;
                string? description = rejected.Error?.Description;
                if (info is not null)
                {
                    info.TryGetValue(AmqpCodec.DeadLetterReasonProperty, out reason);
                    if (info.TryGetValue(AmqpCodec.DeadLetterDescriptionProperty, out string? infoDescription))
                    {
                        description = infoDescription;
                    }
                }

                return (SettleKind.DeadLetter, reason ?? rejected.Error?.Condition.Value, description);
            case Modified { UndeliverableHere: true }:
                return (SettleKind.Defer, null, null);
            default:
                return (SettleKind.Abandon, null, null);
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
        SettleResult.SessionLockLost => new Rejected { Error = new Error { Condition = ServiceBusSymbols.SessionLockLost, Description = "The session lock has expired or the session was released." } },
        SettleResult.NotSupported => new Rejected { Error = new Error { Condition = ServiceBusSymbols.NotImplemented, Description = "The test broker does not support deferring messages." } },
        _ => new Rejected { Error = new Error { Condition = ServiceBusSymbols.MessageLockLost, Description = LockLostDescription } },
    };

    private void OnCredit(uint credit, bool drain, ArraySegment<byte> txnId)
    {
        if (_closed)
        {
            return;
        }

        if (_broker.Faults.TakeReceiveFault() is { } fault)
        {
            var (condition, description) = FaultErrors.For(fault, SessionId is not null);
            Close(condition, description);
            return;
        }

        _broker.Operate(
            _ =>
            {
                Credit = (int)Math.Min(int.MaxValue, (long)Credit + credit);
                return 0;
            },
            drain ? () => Credit = 0 : null);
    }

    private void OnDisposition(Delivery delivery)
    {
        Outcome outcome;
        var tag = delivery.DeliveryTag;
        var (kind, reason, description) = Classify(delivery.State);
        if (tag.Array is null || tag.Count != 16)
        {
            outcome = OutcomeFor(SettleResult.LockLost, kind);
        }
        else
        {
            var lockToken = new Guid(tag.AsSpan());
            var result = _broker.Operate(now => Queue.SettleLocked(this, lockToken, kind, reason, description, now));
            outcome = OutcomeFor(result, kind);
        }

        if (!delivery.Settled)
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
    }
}
