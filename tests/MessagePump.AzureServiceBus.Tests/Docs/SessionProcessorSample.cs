using Azure.Messaging.ServiceBus;

namespace PriorityAsync.MessagePump.AzureServiceBus.Tests.Docs;

/// <summary>The session processor sample of docs/azure-service-bus.md, compiled, and run by <see cref="SessionProcessorSampleTests"/>.</summary>
internal static class SessionProcessorSample
{
    public static async Task RunAsync(ServiceBusClient client, Func<string, BinaryData, CancellationToken, Task> handle, CancellationToken stop)
    {
        await using var processor = client.CreatePumpSessionProcessor("orders-by-customer", new ServiceBusPumpSessionProcessorOptions
        {
            MaxConcurrentSessions = 8,                       // sessions held at once, one message of each at a time
            SessionIdleTimeout = TimeSpan.FromSeconds(10),   // a session with no message for this long is released
        });
        processor.SessionInitializingAsync += async args =>
        {
            var state = await args.GetSessionStateAsync(args.CancellationToken);   // before the session's first message
            Console.WriteLine($"session {args.SessionId}: {(state is null ? "new" : state.ToString())}");
        };
        processor.ProcessMessageAsync += async args =>
        {
            await handle(args.SessionId, args.Message.Body, args.CancellationToken);
            await args.SetSessionStateAsync(BinaryData.FromString($"last: {args.Message.MessageId}"), args.CancellationToken);
            if (args.Message.Subject == "end-of-order")
            {
                args.ReleaseSession();   // closed after this handler; accepted again when more comes
            }
        };
        processor.SessionClosingAsync += args =>
        {
            Console.WriteLine($"session {args.SessionId} closed");   // after its last handler ended
            return Task.CompletedTask;
        };
        processor.ProcessErrorAsync += args =>
        {
            Console.Error.WriteLine($"{args.ErrorSource}: {args.Exception.Message}");
            return Task.CompletedTask;
        };
        await processor.StartProcessingAsync(stop);
        await Task.Delay(Timeout.InfiniteTimeSpan, stop).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await processor.StopProcessingAsync(CancellationToken.None);
    }
}
