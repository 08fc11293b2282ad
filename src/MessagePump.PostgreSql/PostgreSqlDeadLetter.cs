namespace PriorityAsync.MessagePump.PostgreSql;

/// <summary>A row of <c>priorityasync.dead_letters</c>.</summary>
/// <param name="MessageId">The message's identifier.</param>
/// <param name="Body">The message's body.</param>
/// <param name="Reason">Why it was dead-lettered: the handler's reason, or <see cref="PostgreSqlQueue.MaxDeliveryCountExceededReason"/>.</param>
/// <param name="DeliveryCount">How many deliveries it had.</param>
/// <param name="EnqueuedAt">When it was sent (server clock).</param>
/// <param name="DeadLetteredAt">When it was dead-lettered (server clock).</param>
public sealed record PostgreSqlDeadLetter(
    string MessageId,
    ReadOnlyMemory<byte> Body,
    string Reason,
    int DeliveryCount,
    DateTimeOffset EnqueuedAt,
    DateTimeOffset DeadLetteredAt)
{
    /// <summary>Gets the message's headers, as sent; empty when it had none.</summary>
    public IReadOnlyDictionary<string, string> Headers { get; init; } = System.Collections.ObjectModel.ReadOnlyDictionary<string, string>.Empty;
}
