using Azure.Messaging.ServiceBus;
using Microsoft.Extensions.Time.Testing;

namespace PriorityAsync.MessagePump.AzureServiceBus.Testing.Tests;

/// <summary>A broker on a fake clock (started at the current UTC time) and a client with short retries, disposed together.</summary>
internal sealed class BrokerHarness : IAsyncDisposable
{
    /// <summary>A bound that only turns a hang into a failure; never a speed assertion.</summary>
    public static readonly TimeSpan HangBound = Bounded.Patient;

    private BrokerHarness(ServiceBusTestBroker broker, FakeTimeProvider clock, ServiceBusClient client)
    {
        Broker = broker;
        Clock = clock;
        Client = client;
    }

    public ServiceBusTestBroker Broker { get; }

    public FakeTimeProvider Clock { get; }

    public ServiceBusClient Client { get; }

    public static async Task<BrokerHarness> StartAsync(int maxRetries = 2)
    {
        var clock = new FakeTimeProvider(TestBrokerClients.WholeMillisecondsNow());
        var broker = await ServiceBusTestBroker.StartAsync(new ServiceBusTestBrokerOptions { TimeProvider = clock });
        var client = new ServiceBusClient(broker.ConnectionString, ClientOptions(maxRetries));
        return new BrokerHarness(broker, clock, client);
    }

    public static ServiceBusClientOptions ClientOptions(int maxRetries = 2) => TestBrokerClients.ClientOptions(maxRetries);

    public async ValueTask DisposeAsync()
    {
        await Client.DisposeAsync();
        await Broker.DisposeAsync();
    }
}
