using Microsoft.Azure.Amqp;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>
/// A request node's answer, and what happens once it is sent (a session lock the request lost detaches its holder's
/// link then, so the client reads the answer first, as from Service Bus).
/// </summary>
internal readonly record struct RequestAnswer(AmqpMessage Response, Action? AfterSent = null)
{
    public static implicit operator RequestAnswer(AmqpMessage response) => new(response);
}
