using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Time.Testing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>A broker on a fake clock (started at the current UTC time) and a client with short retries, disposed together.</summary>
internal sealed class BrokerHarness : TestBrokerHarness<FakeTimeProvider>
{
    private BrokerHarness(ServiceBusTestBroker broker, FakeTimeProvider clock, ServiceBusClient client)
        : base(broker, clock)
    {
        Client = client;
    }

    public ServiceBusClient Client { get; }

    public static async Task<BrokerHarness> StartAsync(int maxRetries = 2)
    {
        var clock = new FakeTimeProvider(WholeMillisecondsNow());
        var broker = await StartBrokerAsync(clock);
        var client = new ServiceBusClient(broker.ConnectionString, ClientOptions(maxRetries));
        return new BrokerHarness(broker, clock, client);
    }

    protected override ValueTask DisposeClientAsync() => Client.DisposeAsync();
}
