namespace PriorityAsync.MessagePump.AzureServiceBus.Testing;

/// <summary>A record of one message moved to an entity's dead-letter sub-queue.</summary>
public sealed class ServiceBusTestDeadLetter
{
    internal ServiceBusTestDeadLetter(string messageId, string? reason, string? description, int deliveryCount)
    {
        MessageId = messageId;
        Reason = reason;
        Description = description;
        DeliveryCount = deliveryCount;
    }

    /// <summary>The message id of the dead-lettered message.</summary>
    public string MessageId { get; }

    /// <summary>The dead-letter reason (the client's reason, or <c>MaxDeliveryCountExceeded</c> when the broker moved it).</summary>
    public string? Reason { get; }

    /// <summary>The dead-letter error description.</summary>
    public string? Description { get; }

    /// <summary>How many times the message had been delivered when it was dead-lettered.</summary>
    public int DeliveryCount { get; }

    /// <inheritdoc/>
    public override string ToString() => $"{MessageId}: {Reason} ({Description}) after {DeliveryCount} deliveries";
}
