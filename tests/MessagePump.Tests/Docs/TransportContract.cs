using System.Collections.ObjectModel;

// The transport interfaces as docs/message-pump.md ("The transport") shows them: the page's block is an excerpt of this
// file, and TransportContractTests checks that these declarations have exactly the members, types and parameters of the
// real PriorityAsync.MessagePump.IMessageSource and ILeasedMessage, so the page cannot drift from the API.
namespace PriorityAsync.MessagePump.Tests.Docs.Contract;

public interface IMessageSource
{
    TimeSpan? LockDuration { get; }                      // null when unknown
    Task<ILeasedMessage?> ReceiveAsync(CancellationToken cancellationToken = default); // null: queue empty

    // Batches, with default implementations over the single calls (override where the broker has them):
    bool CompletesBatchesNatively => false;              // true: CompleteBatchAsync is one broker call
    bool RenewsBatchesNatively => false;                 // true: RenewBatchAsync is one broker call
    string MessagingSystem => "unknown";                 // OpenTelemetry messaging.system, e.g. "servicebus"
    string? DestinationName => null;                     // messaging.destination.name: the queue's name
    Task<IReadOnlyList<ILeasedMessage>> ReceiveBatchAsync(int maxMessages, CancellationToken cancellationToken = default);
    Task<IReadOnlyList<Exception?>> CompleteBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default);
    Task<IReadOnlyList<LeaseRenewal>> RenewBatchAsync(IReadOnlyList<ILeasedMessage> messages, CancellationToken cancellationToken = default);
}

public interface ILeasedMessage
{
    string MessageId { get; }
    ReadOnlyMemory<byte> Body { get; }
    IReadOnlyDictionary<string, string> Headers => ReadOnlyDictionary<string, string>.Empty; // application properties
    int DeliveryCount { get; }                           // 1 on the first delivery
    DateTimeOffset LockedUntil { get; }
    Task<DateTimeOffset> RenewLockAsync(CancellationToken cancellationToken = default);
    Task CompleteAsync(CancellationToken cancellationToken = default);
    Task AbandonAsync(CancellationToken cancellationToken = default);
    Task DeadLetterAsync(string reason, CancellationToken cancellationToken = default);
    Task DeadLetterAsync(string reason, string? description, CancellationToken cancellationToken = default) =>
        DeadLetterAsync(reason, cancellationToken);      // a broker without descriptions drops it
}

// A transport's message that settles by value and routes a handler's settle calls through the pump that owns it:
public interface ISettleableMessage : ILeasedMessage
{
    Task<SettlementOutcome> SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default);
    void RouteSettlementsThrough(ISettlementOwner owner); // called once by the pump that takes the delivery
}

public interface ISettlementOwner                         // the pump's delivery: claims once, counts, retries
{
    Task SettleAsync(MessageSettlement settlement, CancellationToken cancellationToken = default);
}
