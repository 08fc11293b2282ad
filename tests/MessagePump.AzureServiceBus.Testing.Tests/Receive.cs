using Azure.Messaging.ServiceBus;

namespace MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>Receive helpers bounded by <see cref="BrokerHarness.HangBound"/> (a hang fails the test; no speed is asserted).</summary>
internal static class Receive
{
    /// <summary>Receives until <paramref name="count"/> messages arrived (the client may return a batch in parts).</summary>
    public static async Task<List<ServiceBusReceivedMessage>> ExactlyAsync(ServiceBusReceiver receiver, int count)
    {
        var received = new List<ServiceBusReceivedMessage>();
        using var bound = new CancellationTokenSource(BrokerHarness.HangBound);
        while (received.Count < count)
        {
            var batch = await receiver.ReceiveMessagesAsync(count - received.Count, BrokerHarness.HangBound, bound.Token);
            received.AddRange(batch);
        }

        return received;
    }

    public static async Task<ServiceBusReceivedMessage> OneAsync(ServiceBusReceiver receiver) => (await ExactlyAsync(receiver, 1))[0];
}
