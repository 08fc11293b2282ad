namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>The sessions sample of docs/azure-service-bus.md, compiled.</summary>
internal static class SessionsSample
{
    public static async Task<PriorityMessagePump> StartAsync(ServiceBusTransport transport, PriorityScheduler scheduler)
    {
        // <sessions>
        var sessions = await transport.OpenSessionsAsync(ServiceBusEntity.Queue("orders-by-customer"), maxConcurrentSessions: 8);
        var pump = new PriorityMessagePump(
            sessions,
            async (context, cancellationToken) =>
            {
                var message = (ServiceBusLeasedMessage)context.Message;       // message.SessionId: the customer
                await Task.Delay(10, cancellationToken);                        // one message of a session at a time, in order
            },
            scheduler);
        await pump.StartAsync();
        // </sessions>
        return pump;
    }
}
