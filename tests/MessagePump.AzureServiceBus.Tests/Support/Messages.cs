using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Support;

/// <summary>Received messages built with <see cref="ServiceBusModelFactory"/>.</summary>
internal static class Messages
{
    public static ServiceBusReceivedMessage Received(
        string messageId,
        DateTimeOffset lockedUntil,
        int deliveryCount = 1,
        string? sessionId = null,
        IDictionary<string, object>? properties = null,
        long sequenceNumber = 1) =>
        ServiceBusModelFactory.ServiceBusReceivedMessage(
            body: BinaryData.FromString($"body of {messageId}"),
            messageId: messageId,
            sessionId: sessionId,
            properties: properties,
            lockTokenGuid: Guid.NewGuid(),
            deliveryCount: deliveryCount,
            lockedUntil: lockedUntil,
            sequenceNumber: sequenceNumber);
}

/// <summary>The lock token as a GUID.</summary>
internal static class ReceivedMessageExtensions
{
    public static Guid LockTokenGuid(this ServiceBusReceivedMessage message) => Guid.Parse(message.LockToken);
}
