using Microsoft.Azure.Amqp;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Amqp;

/// <summary>The $cbs node: every put-token is accepted (the broker checks no token).</summary>
internal static class CbsNode
{
    public static Task<AmqpMessage> HandleAsync(AmqpMessage request)
    {
        var response = AmqpMessage.Create();
        response.ApplicationProperties.Map["status-code"] = 202;
        response.ApplicationProperties.Map["status-description"] = "Accepted";
        return Task.FromResult(response);
    }
}
